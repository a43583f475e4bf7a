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
)

// Defaults of Config.
const (
	DefaultAuthKeyID      = 1
	DefaultMessageLimit   = 9000
	DefaultKeepAlive      = 15 * time.Second
	DefaultRequestTimeout = 10 * time.Second
	// MaxEd25519Message is the longest message Sign EdDSA takes: what fits
	// in the device's 3136-byte buffer once framed, padded and MACed.
	MaxEd25519Message = 3114
	// LabelSize is the longest object label the device stores, in bytes.
	LabelSize = 40
)

// Config says how to reach a YubiHSM 2 and authenticate to it.
type Config struct {
	// URL is the yubihsm-connector's base URL, e.g.
	// "http://127.0.0.1:12345" (a bare "host:port" means http).
	URL string
	// AuthKeyID is the authentication key's object id; 0 means 1, the
	// factory key.
	AuthKeyID uint16
	// Password is the authentication key's password. Open derives the
	// key from it (PBKDF2, protocols.md B.3) and keeps only the derived
	// key; the caller may wipe the slice once Open returns.
	Password []byte
	// PasswordFunc, when Password is nil, is called once by Open for the
	// password; Open wipes the slice it returns after use.
	PasswordFunc func() ([]byte, error)
	// Domains are the domains of keys that GenerateKey and ImportKey
	// create; 0 means domain 1 (0x0001).
	Domains uint16
	// Sessions is the number of sessions each Signer (and the Client for
	// key management) keeps, 1 to 16; 0 means 1. The device executes one
	// command at a time, so more sessions add no throughput; they let
	// signs on one Signer queue on the device rather than in the host.
	Sessions int
	// MessageLimit is how many commands a session carries before it is
	// replaced; 0 means 9000, below yubihsm-go's hard limit of 10000.
	MessageLimit uint32
	// KeepAlive is how often idle sessions are pinged with Echo so that
	// the device, which drops a session after 30 s without a command,
	// keeps them; 0 means 15 s, a negative value turns pings off.
	KeepAlive time.Duration
	// RequestTimeout bounds each HTTP request to the connector, whatever
	// the caller's context says; 0 means 10 s.
	RequestTimeout time.Duration
	// HTTPClient, when set, is used instead of the package's own client
	// (which has timeouts and never uses a proxy).
	HTTPClient *http.Client
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
	return min(max(c.Sessions, 1), 16)
}

// Client is a connection to a YubiHSM 2 through a yubihsm-connector, with
// a session of its own for key management. It implements
// signer.KeyGenerator, KeyImporter, KeyLister, KeyOpener and KeyDeleter
// for Ed25519 and ECDSA P-256 keys. It is safe for concurrent use.
type Client struct {
	l    *link
	pool *pool

	closeOnce sync.Once
}

var (
	_ signer.KeyGenerator = (*Client)(nil)
	_ signer.KeyImporter  = (*Client)(nil)
	_ signer.KeyLister    = (*Client)(nil)
	_ signer.KeyOpener    = (*Client)(nil)
	_ signer.KeyDeleter   = (*Client)(nil)
)

// Open connects to the connector at cfg.URL, checks that a device is
// attached, and authenticates a first session, so a wrong password fails
// here (with an error wrapping signer.ErrWrongPassphrase).
func Open(ctx context.Context, cfg Config) (*Client, error) {
	if cfg.AuthKeyID == 0 {
		cfg.AuthKeyID = DefaultAuthKeyID
	}
	if cfg.Domains == 0 {
		cfg.Domains = 1
	}
	timeout := cfg.RequestTimeout
	if timeout <= 0 {
		timeout = DefaultRequestTimeout
	}
	t, err := newTransport(cfg.URL, cfg.HTTPClient, timeout)
	if err != nil {
		return nil, err
	}
	pw := cfg.Password
	if pw == nil && cfg.PasswordFunc != nil {
		if pw, err = cfg.PasswordFunc(); err != nil {
			return nil, fmt.Errorf("yubihsm: password: %w", err)
		}
		defer clear(pw)
	}
	if pw == nil {
		return nil, fmt.Errorf("yubihsm: no password (Config.Password or PasswordFunc): %w", signer.ErrInvalidArgument)
	}
	cfg.Password, cfg.PasswordFunc = nil, nil
	tr := signer.ContextTrace(ctx)
	start := tr.Start()
	enc, mac := scp03.AuthKey(pw)
	tr.Measured(signer.StageKDF, start)
	key := append(enc[:], mac[:]...)
	clear(enc[:])
	clear(mac[:])
	l := &link{t: t, authKeyID: cfg.AuthKeyID, cfg: cfg, key: key, refs: 1}
	st, err := t.getStatus(ctx)
	if err == nil && !st.OK {
		err = fmt.Errorf("yubihsm: the connector at %s has no device: %w", cfg.URL, signer.ErrDeviceNotFound)
	}
	if err != nil {
		l.release()
		return nil, err
	}
	c := &Client{l: l, pool: newPool(l, 1)}
	s, err := l.openSession(ctx, tr)
	if err != nil {
		c.Close()
		return nil, err
	}
	<-c.pool.slots
	c.pool.slots <- s
	return c, nil
}

// Close closes the Client's session. Signers opened from it keep working
// until they are closed; the derived authentication key is wiped when the
// last of them closes.
func (c *Client) Close() error {
	c.closeOnce.Do(func() {
		c.pool.close()
		c.l.release()
	})
	return nil
}

// Status asks the connector whether a device is attached.
func (c *Client) Status(ctx context.Context) (Status, error) {
	return c.l.t.getStatus(ctx)
}

// DeviceInfo is what Get Device Info reports.
type DeviceInfo struct {
	Major, Minor, Build byte
	Serial              uint32
	LogTotal, LogUsed   byte
	Algorithms          []byte
}

// DeviceInfo asks the device for its version and serial number (a plain
// command, outside any session).
func (c *Client) DeviceInfo(ctx context.Context) (DeviceInfo, error) {
	m, _ := commands.CreateDeviceInfoCommand()
	frame, _ := m.Serialize()
	b, err := c.l.t.exchange(call{ctx: ctx, tr: signer.ContextTrace(ctx), stage: signer.StageTransport}, frame)
	if err == nil {
		err = checkResponse(frame[0], b)
	}
	if err != nil {
		return DeviceInfo{}, err
	}
	p := b[3:]
	return DeviceInfo{Major: p[0], Minor: p[1], Build: p[2], Serial: binary.BigEndian.Uint32(p[3:7]),
		LogTotal: p[7], LogUsed: p[8], Algorithms: append([]byte(nil), p[9:]...)}, nil
}
