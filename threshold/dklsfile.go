package threshold

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"log/slog"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/signerkit/signerkit/internal/atomicfile"
	"github.com/signerkit/signerkit/internal/keyfile"
	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/threshold/dkls23"
)

// The schemes a config file's scheme key names: FROST on Ed25519 (the
// default, when the key is absent) and DKLS23 on secp256k1.
const (
	SchemeFROST  = "frost-ed25519"
	SchemeDKLS23 = "dkls23-secp256k1"
)

// pemDKLSShare is the PEM block type of a DKLS23 share file.
const pemDKLSShare = "SIGNERKIT DKLS23 SHARE"

// MarshalDKLS23Share returns the share file of a DKLS23 share: one PEM
// block, its headers naming the participant, the threshold and the group
// key. It is as secret as the share: write it with mode 0600.
func MarshalDKLS23Share(s *dkls23.Share) ([]byte, error) {
	b, err := s.MarshalBinary()
	if err != nil {
		return nil, err
	}
	defer clear(b)
	return pem.EncodeToMemory(&pem.Block{Type: pemDKLSShare, Headers: map[string]string{
		"Participant": strconv.Itoa(s.ID), "Threshold": fmt.Sprintf("%d-of-%d", s.T, s.N),
		"Group-Key": hex.EncodeToString(s.PublicKey())}, Bytes: b}), nil
}

// ParseDKLS23Share reads a DKLS23 share file: one PEM block, checked by
// dkls23.UnmarshalShare and against its headers. Errors are
// *ShareFileError values wrapping signer.ErrCorrupt.
func ParseDKLS23Share(data []byte) (*dkls23.Share, error) {
	s, err := parseDKLS23Share(data)
	if err != nil {
		return nil, &ShareFileError{Err: err}
	}
	return s, nil
}

func parseDKLS23Share(data []byte) (*dkls23.Share, error) {
	if len(data) > maxShareFile {
		return nil, corruptShare("more than %d bytes", maxShareFile)
	}
	blocks, err := pemBlocks(data)
	if err != nil {
		return nil, err
	}
	defer func() {
		for _, b := range blocks {
			clear(b.Bytes)
		}
	}()
	if len(blocks) != 1 || blocks[0].Type != pemDKLSShare {
		return nil, corruptShare("not one %s block", pemDKLSShare)
	}
	b := blocks[0]
	s, err := dkls23.UnmarshalShare(b.Bytes)
	if err != nil {
		return nil, corruptShare("%v", err)
	}
	if b.Headers["Participant"] != strconv.Itoa(s.ID) || b.Headers["Group-Key"] != hex.EncodeToString(s.PublicKey()) {
		return nil, corruptShare("the headers do not match the share")
	}
	return s, nil
}

// LoadDKLS23Share reads and parses the DKLS23 share file at path.
func LoadDKLS23Share(path string) (*dkls23.Share, error) {
	data, err := keyfile.Read(path, maxShareFile)
	if err != nil {
		return nil, &ShareFileError{Path: path, Err: err}
	}
	defer clear(data)
	s, err := parseDKLS23Share(data)
	if err != nil {
		return nil, &ShareFileError{Path: path, Err: err}
	}
	return s, nil
}

// WriteDKLS23ShareFiles writes share-<id>.pem for each share to dir, mode
// 0600, refusing to overwrite any, and returns the paths.
func WriteDKLS23ShareFiles(dir string, shares []*dkls23.Share) ([]string, error) {
	var paths []string
	for _, s := range shares {
		b, err := MarshalDKLS23Share(s)
		if err != nil {
			return paths, err
		}
		p := filepath.Join(dir, fmt.Sprintf("share-%d.pem", s.ID))
		err = atomicfile.CreateFile(p, b, atomicfile.Options{})
		clear(b)
		if err != nil {
			return paths, fmt.Errorf("threshold: %w", err)
		}
		paths = append(paths, p)
	}
	return paths, nil
}

// ConfigScheme returns the scheme a coordinator's or party's config file
// names (its scheme key; SchemeFROST when absent), reading nothing else.
// Errors are *ConfigFileError values.
func ConfigScheme(path string) (string, error) {
	cf := &configFile{path: path, dir: filepath.Dir(path)}
	data, err := keyfile.Read(path, maxConfigFile)
	if err != nil {
		return "", cf.wrap("", "cannot read it", err)
	}
	var v struct {
		Scheme string `toml:"scheme"`
	}
	if _, err := toml.NewDecoder(bytes.NewReader(data)).Decode(&v); err != nil {
		return "", cf.decode(data, &v) // the decoder's error, with its line
	}
	return checkScheme(cf, v.Scheme, "")
}

// wantScheme refuses a config file of another scheme than want before it
// is read strictly (its keys are another scheme's).
func wantScheme(path, want string) error {
	scheme, err := ConfigScheme(path)
	if err == nil && scheme != want {
		err = &ConfigFileError{Path: path, Key: "scheme", Msg: fmt.Sprintf("%q, but this is read as a %s file", scheme, want)}
	}
	return err
}

// checkScheme returns scheme ("" meaning SchemeFROST), refusing an
// unknown one, or one other than want when want is set.
func checkScheme(cf *configFile, scheme, want string) (string, error) {
	if scheme == "" {
		scheme = SchemeFROST
	}
	if scheme != SchemeFROST && scheme != SchemeDKLS23 {
		return "", cf.errorf("scheme", "%.40q: want %q or %q", scheme, SchemeFROST, SchemeDKLS23)
	}
	if want != "" && scheme != want {
		return "", cf.errorf("scheme", "%q, but this is read as a %s file", scheme, want)
	}
	return scheme, nil
}

// DKLS23PartyFile is the TOML config file of `signerkit party` serving a
// DKLS23 share. Relative paths are relative to the file.
//
//	scheme = "dkls23-secp256k1"
//	share  = "share-2.pem"
//	listen = "0.0.0.0:7002"
//	cert   = "party-2.crt"
//	key    = "party-2.key"
//	ca     = "ca.crt"
//	coordinators = ["coordinator-1"]
//	metrics_addr = "127.0.0.1:9102"   # optional
type DKLS23PartyFile struct {
	Scheme           string   `toml:"scheme"`
	Share            string   `toml:"share"`
	Listen           string   `toml:"listen"`
	Cert             string   `toml:"cert"`
	Key              string   `toml:"key"`
	CA               string   `toml:"ca"`
	Coordinators     []string `toml:"coordinators"`
	MaxPresignatures int      `toml:"max_presignatures"`
	// ShutdownGrace bounds how long SIGTERM waits for requests in flight;
	// 0 means 5 s.
	ShutdownGrace time.Duration `toml:"shutdown_grace"`
	// MetricsAddr serves /metrics, /healthz and /readyz; empty means none.
	MetricsAddr string `toml:"metrics_addr"`
}

// DKLS23PartySetup is a DKLS23PartyFile loaded.
type DKLS23PartySetup struct {
	Path   string
	File   DKLS23PartyFile
	Config DKLS23PartyConfig
}

// LoadDKLS23PartyFile reads and checks a DKLS23 party's config file and
// loads its share, certificate and CA. Errors are *ConfigFileError values.
func LoadDKLS23PartyFile(path string) (*DKLS23PartySetup, error) {
	s := &DKLS23PartySetup{Path: path}
	cf, err := decodeConfigFile(path, &s.File)
	if err != nil {
		return nil, err
	}
	f := &s.File
	if _, err := checkScheme(cf, f.Scheme, SchemeDKLS23); err != nil {
		return nil, err
	}
	switch {
	case f.Share == "":
		return nil, cf.errorf("share", "missing: this party's DKLS23 share file")
	case f.Listen == "":
		return nil, cf.errorf("listen", "missing: the host:port the party serves on")
	case len(f.Coordinators) == 0:
		return nil, cf.errorf("coordinators", "missing: the coordinators' certificate names or sha256: pins")
	case f.MaxPresignatures < 0 || f.ShutdownGrace < 0:
		return nil, cf.errorf("", "max_presignatures and shutdown_grace may not be negative")
	}
	t, err := partyFileTLS(cf, f.Cert, f.Key, f.CA, f.Coordinators)
	if err != nil {
		return nil, err
	}
	share, err := LoadDKLS23Share(cf.file(f.Share))
	if err != nil {
		return nil, cf.wrap("share", "cannot load it", err)
	}
	s.Config = DKLS23PartyConfig{Share: share, TLS: t, Coordinators: f.Coordinators, MaxPresignatures: f.MaxPresignatures}
	return s, nil
}

// DKLS23CoordinatorFile is the config file a threshold: URI names for a
// DKLS23 key: the coordinator's own share, its certificate, and the
// parties (as in CoordinatorFile).
//
//	scheme = "dkls23-secp256k1"
//	share  = "share-1.pem"            # the share this coordinator holds
//	cert   = "coordinator-1.crt"
//	key    = "coordinator-1.key"
//	ca     = "ca.crt"
//	hedge_after = "50ms"              # optional: absent adaptive, negative off
//	[[party]]
//	id   = 2
//	addr = "10.0.0.2:7002"
type DKLS23CoordinatorFile struct {
	Scheme       string        `toml:"scheme"`
	Share        string        `toml:"share"`
	Cert         string        `toml:"cert"`
	Key          string        `toml:"key"`
	CA           string        `toml:"ca"`
	PartyTimeout time.Duration `toml:"party_timeout"`
	// HedgeAfter is DKLS23Config.HedgeAfter: 0 adaptive, negative off.
	HedgeAfter time.Duration `toml:"hedge_after"`
	PoolSize   int           `toml:"pool_size"`
	Parties    []PartyEntry  `toml:"party"`
}

// LoadDKLS23CoordinatorFile reads and checks a DKLS23 coordinator's config
// file and returns the DKLS23Config it describes, without dialing.
// Errors are *ConfigFileError values.
func LoadDKLS23CoordinatorFile(path string) (DKLS23Config, error) {
	var f DKLS23CoordinatorFile
	cf, err := decodeConfigFile(path, &f)
	if err != nil {
		return DKLS23Config{}, err
	}
	if _, err := checkScheme(cf, f.Scheme, SchemeDKLS23); err != nil {
		return DKLS23Config{}, err
	}
	switch {
	case f.Share == "":
		return DKLS23Config{}, cf.errorf("share", "missing: the DKLS23 share this coordinator holds (the scheme needs one)")
	case len(f.Parties) == 0:
		return DKLS23Config{}, cf.errorf("party", "missing: at least one remote party")
	case f.PartyTimeout < 0:
		return DKLS23Config{}, cf.errorf("party_timeout", "may not be negative")
	}
	share, err := LoadDKLS23Share(cf.file(f.Share))
	if err != nil {
		return DKLS23Config{}, cf.wrap("share", "cannot load it", err)
	}
	check := func(key string, id uint16) error {
		switch {
		case id == 0 || int(id) > share.N:
			return cf.errorf(key+".id", "%d is not a participant of the %d-of-%d key", id, share.T, share.N)
		case int(id) == share.ID:
			return cf.errorf(key+".id", "%d is the coordinator's own share's", id)
		}
		return nil
	}
	cfg := DKLS23Config{Local: share, PartyTimeout: f.PartyTimeout, HedgeAfter: f.HedgeAfter, PoolSize: f.PoolSize}
	cfg.Parties, cfg.TLS, err = loadPartyEntries(cf, f.Cert, f.Key, f.CA, f.Parties, check)
	if err != nil {
		return DKLS23Config{}, err
	}
	if share.T != 2 {
		return DKLS23Config{}, cf.wrap("share", fmt.Sprintf("a %d-of-%d share: only 2-of-n DKLS23 keys are served", share.T, share.N), signer.ErrUnsupported)
	}
	return cfg, nil
}

// OpenDKLS23File opens the coordinator a DKLS23CoordinatorFile describes.
func OpenDKLS23File(path string) (*DKLS23Signer, error) {
	cfg, err := LoadDKLS23CoordinatorFile(path)
	if err != nil {
		return nil, err
	}
	cfg.Log = slog.Default()
	return NewDKLS23Signer(cfg)
}

// partyFileTLS is a party's TLS configuration from its config file: its
// certificate, the coordinators' CA, and the coordinator entries checked
// (a name needs the CA).
func partyFileTLS(cf *configFile, certFile, keyFile, caFile string, coordinators []string) (*tls.Config, error) {
	cert, err := cf.identity("cert", "key", certFile, keyFile)
	if err != nil {
		return nil, err
	}
	pool, err := cf.caPool("ca", caFile)
	if err != nil {
		return nil, err
	}
	for i, c := range coordinators {
		if strings.HasPrefix(c, spkiPrefix) {
			if _, err := cf.checkPin(fmt.Sprintf("coordinators[%d]", i), c); err != nil {
				return nil, err
			}
		} else if pool == nil {
			return nil, cf.errorf(fmt.Sprintf("coordinators[%d]", i), "%.60q is a name, which needs a ca to check it: set ca, or pin the key (sha256:…)", c)
		}
	}
	t := &tls.Config{Certificates: []tls.Certificate{cert}, ClientCAs: pool}
	if pool == nil {
		// Every entry is a pin, which partyTLS checks on every connection.
		t.VerifyPeerCertificate = func([][]byte, [][]*x509.Certificate) error { return nil }
	}
	return t, nil
}
