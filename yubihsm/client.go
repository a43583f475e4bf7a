package yubihsm

import (
	"context"
	"encoding/binary"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/certusone/yubihsm-go/commands"

	"github.com/signerkit/signerkit/internal/scp03"
	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/signer/signertrace"
)

// Defaults of Config, and limits of the device.
const (
	// DefaultConnector is where yubihsm-connector listens unless told
	// otherwise, and the connector a zero Config.Connector means.
	DefaultConnector = "http://127.0.0.1:12345"
	// DefaultAuthKeyID is the object id of the factory authentication
	// key, which a zero Config.AuthKeyID means.
	DefaultAuthKeyID = 1
	// DefaultMessageLimit is how many commands a session carries before
	// it is replaced when Config.MessageLimit is zero.
	DefaultMessageLimit = 9000
	// DefaultKeepAlive is how often idle sessions are pinged when
	// Config.KeepAlive is zero.
	DefaultKeepAlive = 15 * time.Second
	// DefaultRequestTimeout bounds each HTTP request to the connector when
	// Config.RequestTimeout is zero.
	DefaultRequestTimeout = 10 * time.Second
	// DefaultSignTimeout bounds a crypto.Signer Sign, which has no
	// context of its own, when Config.SignTimeout is zero.
	DefaultSignTimeout = 10 * time.Second
	// MaxSessions is the most sessions a Signer keeps (Config.Sessions),
	// and the number of sessions the device holds at once.
	MaxSessions = 16
	// MaxEd25519Message is the longest message Sign EdDSA takes: what fits
	// in the device's 3136-byte buffer once framed, padded and MACed.
	MaxEd25519Message = 3114
	// LabelSize is the longest object label the device stores, in bytes.
	LabelSize = 40
)

// Config says where a YubiHSM 2 is, how to authenticate to it, which key
// Open opens, and how sessions are kept. The zero value of every field but
// Secret (which has no default) and Key (which Open needs) is a documented
// default. ParseURI makes a Config from a yubihsm: URI.
type Config struct {
	// Connector is the yubihsm-connector's base URL, e.g.
	// "http://127.0.0.1:12345"; a bare "host:port" means http, and ""
	// means DefaultConnector. It must not carry credentials (a
	// yubihsm-connector takes none; give an HTTPClient for a proxy that
	// does).
	Connector string
	// AuthKeyID is the object id of the authentication key to open
	// sessions with; 0 means DefaultAuthKeyID, the factory key.
	AuthKeyID uint16
	// Secret returns the authentication key's password. Open and
	// OpenStore call it once, derive the session key from what it returns
	// (PBKDF2, docs/protocols.md B.3), wipe the returned slice and keep only
	// the derived key. It is required.
	Secret signer.Secret
	// Key says which key Open opens: by object id (hex, as KeyInfo.ID),
	// by label, or both; Key.Algorithm, when set, must be the key's.
	// OpenStore ignores it.
	Key signer.KeyRef
	// Domains are the domains of keys that GenerateKey and ImportKey
	// create, as a bit mask (bit 0 is domain 1); 0 means domain 1.
	Domains uint16
	// Sessions is the number of sessions each Signer keeps, 1 to
	// MaxSessions; 0 means 1, and larger values mean MaxSessions. A Store
	// keeps one for key management. The device executes one command at a
	// time, so more sessions add no throughput; they let signs on one
	// Signer queue on the device rather than in the host.
	Sessions int
	// MessageLimit is how many commands a session carries before it is
	// replaced; 0, and values from 10000 (yubihsm-go's hard limit) up,
	// mean DefaultMessageLimit.
	MessageLimit uint32
	// KeepAlive is how often idle sessions are pinged with Echo so that
	// the device, which drops a session after 30 s without a command,
	// keeps them; 0 means DefaultKeepAlive, a negative value turns pings
	// off.
	KeepAlive time.Duration
	// RequestTimeout bounds each HTTP request to the connector, whatever
	// the caller's context says and whichever client carries it (a
	// custom HTTPClient included); 0 means DefaultRequestTimeout.
	RequestTimeout time.Duration
	// SignTimeout bounds Sign, the crypto.Signer method, which takes no
	// context: the wait for a session, session setup and the sign itself
	// end after it with an error wrapping context.DeadlineExceeded, so a
	// hung device cannot hold the caller (or a session) for ever. Zero
	// or negative means DefaultSignTimeout. SignContext is bounded by
	// its context instead (and each request by RequestTimeout).
	SignTimeout time.Duration
	// HTTPClient, when set, is used instead of the package's own client
	// (which has timeouts, reads at most 16 KiB of response headers and
	// never uses a proxy). RequestTimeout applies to it too. A request it
	// fails with an error wrapping a *DeadlineError fails the command
	// with that error; yubihsm/yubihsmsim's HTTPClient does so for a
	// simulator in accounted time.
	HTTPClient *http.Client
}

func (c Config) signTimeout() time.Duration {
	if c.SignTimeout <= 0 {
		return DefaultSignTimeout
	}
	return c.SignTimeout
}

func (c Config) messageLimit() uint32 {
	if c.MessageLimit == 0 || c.MessageLimit >= 10000 {
		return DefaultMessageLimit
	}
	return c.MessageLimit
}

func (c Config) keepAlive() time.Duration {
	if c.KeepAlive == 0 {
		return DefaultKeepAlive
	}
	return c.KeepAlive
}

func (c Config) sessions() int {
	return min(max(c.Sessions, 1), MaxSessions)
}

// Store is a connection to a YubiHSM 2 through a yubihsm-connector, with
// a session of its own for key management. It implements
// signer.KeyGenerator, KeyImporter, KeyLister, KeyOpener and KeyDeleter
// for Ed25519 and ECDSA P-256 keys. It is safe for concurrent use.
type Store struct {
	l    *link
	pool *pool

	closeOnce sync.Once
}

var (
	_ signer.KeyGenerator = (*Store)(nil)
	_ signer.KeyImporter  = (*Store)(nil)
	_ signer.KeyLister    = (*Store)(nil)
	_ signer.KeyOpener    = (*Store)(nil)
	_ signer.KeyDeleter   = (*Store)(nil)
)

// OpenStore connects to the connector at cfg.Connector, checks that a
// device is attached, and authenticates a first session, so a wrong
// password fails here (with an error wrapping signer.ErrWrongPassphrase).
// It ignores cfg.Key.
func OpenStore(ctx context.Context, cfg Config) (*Store, error) {
	if cfg.AuthKeyID == 0 {
		cfg.AuthKeyID = DefaultAuthKeyID
	}
	if cfg.Domains == 0 {
		cfg.Domains = 1
	}
	if cfg.Connector == "" {
		cfg.Connector = DefaultConnector
	}
	timeout := cfg.RequestTimeout
	if timeout <= 0 {
		timeout = DefaultRequestTimeout
	}
	t, err := newTransport(cfg.Connector, cfg.HTTPClient, timeout)
	if err != nil {
		return nil, err
	}
	if cfg.Secret == nil {
		return nil, fmt.Errorf("yubihsm: no password for authentication key %04x (Config.Secret): %w", cfg.AuthKeyID, signer.ErrInvalidArgument)
	}
	pw, err := cfg.Secret()
	if err != nil {
		return nil, wrap(err, "password for authentication key %04x", cfg.AuthKeyID)
	}
	defer clear(pw)
	cfg.Secret, cfg.Key = nil, signer.KeyRef{}
	tr := signertrace.ContextTrace(ctx)
	start := tr.Start()
	enc, mac := scp03.AuthKey(pw)
	tr.Measured(signertrace.StageKDF, start)
	key := append(enc[:], mac[:]...)
	clear(enc[:])
	clear(mac[:])
	l := &link{t: t, authKeyID: cfg.AuthKeyID, cfg: cfg, key: key, refs: 1}
	st, err := t.getStatus(ctx)
	if err == nil && !st.OK {
		err = fmt.Errorf("yubihsm: the connector at %s has no device: %w", t.base, signer.ErrDeviceNotFound)
	}
	if err != nil {
		l.release()
		return nil, err
	}
	s := &Store{l: l, pool: newPool(l, 1)}
	sess, err := l.openSession(ctx, tr)
	if err != nil {
		s.Close()
		return nil, err
	}
	<-s.pool.slots
	s.pool.slots <- sess
	return s, nil
}

// Open opens the key cfg.Key names, as a Signer with sessions of its own:
// it connects as OpenStore does, finds the key, and closes the Store
// again, so the Signer's Close releases everything Open acquired.
func Open(ctx context.Context, cfg Config) (*Signer, error) {
	if cfg.Key.ID == "" && cfg.Key.Label == "" {
		return nil, fmt.Errorf("yubihsm: Config.Key names no key (give its id or label): %w", signer.ErrInvalidArgument)
	}
	st, err := OpenStore(ctx, cfg)
	if err != nil {
		return nil, err
	}
	defer st.Close() // the Signer holds the connection
	return st.openKey(ctx, cfg.Key)
}

// Close closes the Store's session. Signers opened from it keep working
// until they are closed; the derived authentication key is wiped when the
// last of them closes. Close is idempotent and always returns nil.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		s.pool.close()
		s.l.release()
	})
	return nil
}

// Status asks the connector whether a device is attached.
func (s *Store) Status(ctx context.Context) (Status, error) {
	return s.l.t.getStatus(ctx)
}

// DeviceInfo is what Get Device Info reports.
type DeviceInfo struct {
	// Major, Minor and Build are the firmware version, e.g. 2.4.0.
	Major, Minor, Build byte
	// Serial is the device's serial number.
	Serial uint32
	// LogTotal and LogUsed are the size of the audit log and the number
	// of its entries in use.
	LogTotal, LogUsed byte
	// Algorithms are the device's codes of the algorithms it supports.
	Algorithms []byte
}

// DeviceInfo asks the device for its version and serial number (a plain
// command, outside any session).
func (s *Store) DeviceInfo(ctx context.Context) (DeviceInfo, error) {
	m, _ := commands.CreateDeviceInfoCommand()
	frame, _ := m.Serialize()
	b, err := s.l.t.exchange(call{ctx: ctx, tr: signertrace.ContextTrace(ctx), stage: signertrace.StageTransport}, frame)
	if err == nil {
		err = checkResponse(frame[0], b)
	}
	if err != nil {
		return DeviceInfo{}, wrap(err, "device info")
	}
	p := b[3:]
	return DeviceInfo{Major: p[0], Minor: p[1], Build: p[2], Serial: binary.BigEndian.Uint32(p[3:7]),
		LogTotal: p[7], LogUsed: p[8], Algorithms: append([]byte(nil), p[9:]...)}, nil
}
