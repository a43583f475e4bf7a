package threshold

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/signerkit/signerkit/guard"
	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/threshold/frost"
)

// Scheme is the URI scheme this package registers with signer.Register:
//
//	threshold:config=/etc/signerkit/threshold.toml
//
// names a coordinator's config file (CoordinatorFile).
const Scheme = "threshold"

// CoordinatorFile is the TOML config file of a coordinator, the file a
// threshold: URI names. Relative paths in it are relative to the file.
//
//	public = "public.pem"            # the key's public key file (or a share file)
//	cert   = "coordinator-1.crt"     # this coordinator's certificate …
//	key    = "coordinator-1.key"     # … and its private key (PEM)
//	ca     = "ca.crt"                # the CA of the parties' certificates
//	party_timeout = "2s"
//
//	[[party]]
//	id   = 1
//	addr = "10.0.0.1:7001"
//	pin  = "sha256:…"                # optional with ca; without, a pin or
//	                                 # cert = "party-1.crt" (its key pinned)
//
//	[local]                          # optional: a share this coordinator holds
//	share     = "share-1.pem"
//	nonce_dir = "/var/lib/signerkit/nonces"
type CoordinatorFile struct {
	// Scheme is SchemeFROST or empty (a DKLS23 key's file is a
	// DKLS23CoordinatorFile).
	Scheme string `toml:"scheme"`
	Public string `toml:"public"`
	Cert   string `toml:"cert"`
	Key    string `toml:"key"`
	// CA is a PEM file of the CA certificates that issued the parties';
	// without it every party needs a pin.
	CA string `toml:"ca"`
	// PartyTimeout, HedgeAfter and PoolSize are Config's (0: its
	// defaults).
	PartyTimeout time.Duration `toml:"party_timeout"`
	HedgeAfter   time.Duration `toml:"hedge_after"`
	PoolSize     int           `toml:"pool_size"`
	Parties      []PartyEntry  `toml:"party"`
	Local        *LocalEntry   `toml:"local"`
}

// PartyEntry is one remote party in a CoordinatorFile.
type PartyEntry struct {
	ID   uint16 `toml:"id"`
	Addr string `toml:"addr"`
	// ServerName is the DNS name the party's certificate carries; empty
	// means party-<id>, the name `signerkit threshold certs` issues.
	ServerName string `toml:"server_name"`
	// Pin is "sha256:" and the hex SHA-256 of the party certificate's
	// SubjectPublicKeyInfo; the connection is refused unless it matches.
	Pin string `toml:"pin"`
	// Cert, instead of Pin, is the party's certificate file, whose key is
	// pinned.
	Cert string `toml:"cert"`
}

// LocalEntry is the share a coordinator holds itself (Config.Local).
type LocalEntry struct {
	Share    string `toml:"share"`
	NonceDir string `toml:"nonce_dir"`
}

// coordinator is a Config loaded from a file, with the local share's
// nonce store and key to close.
type coordinator struct {
	cfg    Config
	nonces *frost.NonceStore
}

func (c *coordinator) close() {
	if c.nonces != nil {
		c.nonces.Close()
	}
	if c.cfg.Local != nil {
		c.cfg.Local.Key.Wipe()
	}
}

// LoadCoordinatorFile reads and checks a coordinator's config file and
// returns the Config it describes, without dialing any party: the files
// it names are read, the parties checked against the public key package,
// and the local share (if any) against it. With a local share, its nonce
// store is opened (and locked) too: close it (Config.Local.Nonces) when
// done. Errors are *ConfigFileError values.
func LoadCoordinatorFile(path string) (Config, error) {
	c, err := loadCoordinator(path)
	if err != nil {
		return Config{}, err
	}
	return c.cfg, nil
}

func loadCoordinator(path string) (*coordinator, error) {
	if err := wantScheme(path, SchemeFROST); err != nil {
		return nil, err
	}
	var f CoordinatorFile
	cf, err := decodeConfigFile(path, &f)
	if err != nil {
		return nil, err
	}
	out := &coordinator{}
	if err := f.load(cf, out); err != nil {
		out.close()
		return nil, err
	}
	return out, nil
}

func (f *CoordinatorFile) load(cf *configFile, out *coordinator) error {
	if _, err := checkScheme(cf, f.Scheme, SchemeFROST); err != nil {
		return err
	}
	if f.Public == "" {
		return cf.errorf("public", "missing: the key's public key file (public.pem from signerkit threshold split or dkg)")
	}
	pub, err := LoadPublic(cf.file(f.Public))
	if err != nil {
		return cf.wrap("public", "cannot load it", err)
	}
	out.cfg = Config{Public: pub, PartyTimeout: f.PartyTimeout, HedgeAfter: f.HedgeAfter, PoolSize: f.PoolSize}
	if f.PoolSize < 0 || f.PartyTimeout < 0 {
		return cf.errorf("pool_size", "pool_size and party_timeout may not be negative")
	}
	if err := f.loadLocal(cf, out); err != nil {
		return err
	}
	if err := f.loadParties(cf, &out.cfg); err != nil {
		return err
	}
	n := len(f.Parties)
	if out.cfg.Local != nil {
		n++
	}
	if n < pub.MinSigners() {
		return cf.errorf("party", "%d signers (parties and local share) for a %d-of-%d key: at least %d are needed", n, pub.MinSigners(), len(pub.IDs()), pub.MinSigners())
	}
	return nil
}

func (f *CoordinatorFile) loadLocal(cf *configFile, out *coordinator) error {
	if f.Local == nil {
		return nil
	}
	switch {
	case f.Local.Share == "":
		return cf.errorf("local.share", "missing: the share file this coordinator holds")
	case f.Local.NonceDir == "":
		return cf.errorf("local.nonce_dir", "missing: the directory of the local share's nonce store")
	}
	k, pub, err := LoadShare(cf.file(f.Local.Share))
	if err != nil {
		return cf.wrap("local.share", "cannot load it", err)
	}
	if !pub.GroupPublicKey().Equal(out.cfg.Public.GroupPublicKey()) {
		k.Wipe()
		return cf.wrap("local.share", "the share is of another key than "+f.Public, signer.ErrInvalidKey)
	}
	out.cfg.Local = &Local{Key: k}
	if err := os.MkdirAll(cf.file(f.Local.NonceDir), 0o700); err != nil {
		return cf.wrap("local.nonce_dir", "cannot make it", err)
	}
	st, err := frost.OpenNonceStore(k, frost.NonceStoreConfig{FS: guard.DirFS(cf.file(f.Local.NonceDir))})
	if err != nil {
		return cf.wrap("local.nonce_dir", "cannot open the nonce store", err)
	}
	out.nonces, out.cfg.Local.Nonces = st, st
	return nil
}

func (f *CoordinatorFile) loadParties(cf *configFile, cfg *Config) error {
	if len(f.Parties) == 0 {
		return nil
	}
	check := func(key string, id uint16) error {
		switch {
		case id == 0 || cfg.Public.VerifyingShare(frost.Identifier(id)) == nil:
			return cf.errorf(key+".id", "%d is not a participant of the key (its identifiers are %v)", id, cfg.Public.IDs())
		case cfg.Local != nil && cfg.Local.Key.ID() == frost.Identifier(id):
			return cf.errorf(key+".id", "%d is the local share's", id)
		}
		return nil
	}
	var err error
	cfg.Parties, cfg.TLS, err = loadPartyEntries(cf, f.Cert, f.Key, f.CA, f.Parties, check)
	return err
}

// loadPartyEntries loads a coordinator's certificate and the parties of
// its config file (check vets each id) and returns them with the TLS
// configuration that admits each party by the CA, its pin, or both.
func loadPartyEntries(cf *configFile, certFile, keyFile, caFile string, entries []PartyEntry, check func(key string, id uint16) error) ([]Remote, *tls.Config, error) {
	cert, err := cf.identity("cert", "key", certFile, keyFile)
	if err != nil {
		return nil, nil, err
	}
	roots, err := cf.caPool("ca", caFile)
	if err != nil {
		return nil, nil, err
	}
	var parties []Remote
	pins := map[string][sha256.Size]byte{}
	for i, p := range entries {
		key := fmt.Sprintf("party[%d]", i)
		if err := check(key, p.ID); err != nil {
			return nil, nil, err
		}
		if p.Addr == "" {
			return nil, nil, cf.errorf(key+".addr", "missing: the party's host:port")
		}
		name := p.ServerName
		if name == "" {
			name = fmt.Sprintf("party-%d", p.ID)
		}
		if _, dup := pins[name]; dup {
			return nil, nil, cf.errorf(key+".server_name", "%q is another party's too", name)
		}
		pins[name] = [sha256.Size]byte{}
		if p.Cert != "" {
			if p.Pin != "" {
				return nil, nil, cf.errorf(key+".cert", "given with pin: use one")
			}
			if p.Pin, err = CertFilePin(cf.file(p.Cert)); err != nil {
				return nil, nil, cf.wrap(key+".cert", "cannot read its key", err)
			}
		}
		if p.Pin != "" {
			if pins[name], err = cf.checkPin(key+".pin", p.Pin); err != nil {
				return nil, nil, err
			}
		} else if roots == nil {
			return nil, nil, cf.errorf(key+".pin", "missing, and there is no ca: the party's certificate must be pinned or issued by a CA")
		}
		parties = append(parties, Remote{ID: frost.Identifier(p.ID), Addr: p.Addr, ServerName: name})
	}
	t := &tls.Config{Certificates: []tls.Certificate{cert}, RootCAs: roots, InsecureSkipVerify: roots == nil,
		VerifyConnection: func(cs tls.ConnectionState) error { return checkPartyPin(pins, cs) }}
	return parties, t, nil
}

// errPartyPin is a party whose certificate does not match its pin.
var errPartyPin = errors.New("threshold: the party's certificate does not match its pin")

func checkPartyPin(pins map[string][sha256.Size]byte, cs tls.ConnectionState) error {
	pin, ok := pins[cs.ServerName]
	if !ok || len(cs.PeerCertificates) == 0 {
		return errPartyPin
	}
	if pin == ([sha256.Size]byte{}) {
		return nil // no pin: the CA's verification stands
	}
	if sha256.Sum256(cs.PeerCertificates[0].RawSubjectPublicKeyInfo) != pin {
		return fmt.Errorf("%w (%s)", errPartyPin, cs.ServerName)
	}
	return nil
}

// OpenFile opens the coordinator that a CoordinatorFile describes: its
// Signer, which also closes the local share's nonce store when closed.
func OpenFile(path string) (*Signer, error) {
	c, err := loadCoordinator(path)
	if err != nil {
		return nil, err
	}
	c.cfg.Log = slog.Default()
	s, err := New(c.cfg)
	if err != nil {
		c.close()
		return nil, err
	}
	s.onClose = c.close
	return s, nil
}

// parseThresholdURI returns the config path of a threshold: URI.
func parseThresholdURI(uri string) (string, error) {
	u, err := signer.ParseURI(uri)
	if err != nil {
		return "", err
	}
	if u.Scheme != Scheme {
		return "", &signer.URIError{Scheme: u.Scheme, Problem: "not a threshold: URI"}
	}
	if err := u.Allow([]string{"config"}, nil); err != nil {
		return "", err
	}
	p, ok := u.Attr("config")
	if !ok || p == "" {
		return "", u.Errorf("config", "is required: the coordinator's config file")
	}
	return p, nil
}

// CheckURI checks a threshold: URI and the config file it names, as
// OpenFile would, without dialing any party or opening the local share's
// nonce store for long.
func CheckURI(uri string) error {
	path, err := parseThresholdURI(uri)
	if err != nil {
		return err
	}
	if scheme, err := ConfigScheme(path); err != nil {
		return err
	} else if scheme == SchemeDKLS23 {
		_, err := LoadDKLS23CoordinatorFile(path)
		return err
	}
	c, err := loadCoordinator(path)
	if err != nil {
		return err
	}
	c.close()
	return nil
}

func init() {
	signer.Register(Scheme, func(ctx context.Context, uri string, _ signer.Secret) (signer.Signer, error) {
		path, err := parseThresholdURI(uri)
		if err != nil {
			return nil, err
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if scheme, err := ConfigScheme(path); err != nil {
			return nil, err
		} else if scheme == SchemeDKLS23 {
			return OpenDKLS23File(path)
		}
		s, err := OpenFile(path)
		if err != nil {
			return nil, err
		}
		return s, nil
	})
}
