package threshold

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/signerkit/signerkit/guard"
	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/threshold/frost"
)

// PartyFile is the TOML config file of `signerkit party`: one share served
// over mutual TLS. Relative paths in it are relative to the file.
//
//	share  = "share-2.pem"
//	listen = "0.0.0.0:7002"
//	cert   = "party-2.crt"
//	key    = "party-2.key"
//	ca     = "ca.crt"                       # the CA of the coordinators' certificates
//	coordinators = ["coordinator-1", "coordinator-2"]   # names or sha256: pins
//	state_dir = "/var/lib/signerkit-party"  # double-sign state and nonce store
//	chains = ["test-chain"]                 # the chain ids this party signs for
//	metrics_addr = "127.0.0.1:26662"
type PartyFile struct {
	// Scheme is SchemeFROST or empty (a DKLS23 party's file is a
	// DKLS23PartyFile).
	Scheme string `toml:"scheme"`
	Share  string `toml:"share"`
	Listen string `toml:"listen"`
	Cert   string `toml:"cert"`
	Key    string `toml:"key"`
	// CA is a PEM file of the CAs that issued the coordinators'
	// certificates; without it every Coordinators entry must be a pin.
	CA           string   `toml:"ca"`
	Coordinators []string `toml:"coordinators"`
	// StateDir holds the party's double-sign state (StateDir/guard, one
	// file per chain) and its nonce store (StateDir/nonces).
	StateDir string `toml:"state_dir"`
	// Chains are the only chain ids the party signs for; each needs its
	// state made first (`signerkit party -init-height H`).
	Chains []string `toml:"chains"`
	// MetricsAddr serves /metrics, /healthz and /readyz; empty means none.
	MetricsAddr   string        `toml:"metrics_addr"`
	ReclaimAfter  time.Duration `toml:"reclaim_after"`
	NonceCapacity int           `toml:"nonce_capacity"`
	// ShutdownGrace bounds how long SIGTERM waits for requests in flight;
	// 0 means 5 s.
	ShutdownGrace time.Duration `toml:"shutdown_grace"`
}

// PartySetup is a PartyFile loaded: the PartyConfig ready for NewParty,
// with its nonce store open (and its file locked).
type PartySetup struct {
	Path   string
	File   PartyFile
	Config PartyConfig
	// GuardDir and NonceDir are the state directories.
	GuardDir, NonceDir string
}

// Close closes the nonce store and wipes the share (after the Party is
// closed).
func (s *PartySetup) Close() error {
	var err error
	if s.Config.Nonces != nil {
		err = s.Config.Nonces.Close()
	}
	if s.Config.Key != nil {
		s.Config.Key.Wipe()
	}
	return err
}

// PartyDirs returns the guard and nonce directories of a party's state
// directory.
func PartyDirs(stateDir string) (guardDir, nonceDir string) {
	return filepath.Join(stateDir, "guard"), filepath.Join(stateDir, "nonces")
}

// LoadPartyFile reads and checks a party's config file, loads its share,
// certificate and CA, and opens its nonce store. Errors are
// *ConfigFileError values. The caller closes the setup.
func LoadPartyFile(path string) (*PartySetup, error) {
	if err := wantScheme(path, SchemeFROST); err != nil {
		return nil, err
	}
	s := &PartySetup{Path: path}
	cf, err := decodeConfigFile(path, &s.File)
	if err != nil {
		return nil, err
	}
	if err := s.load(cf); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

func (s *PartySetup) load(cf *configFile) error {
	f := &s.File
	if _, err := checkScheme(cf, f.Scheme, SchemeFROST); err != nil {
		return err
	}
	switch {
	case f.Share == "":
		return cf.errorf("share", "missing: this party's share file")
	case f.Listen == "":
		return cf.errorf("listen", "missing: the host:port the party serves on")
	case f.StateDir == "":
		return cf.errorf("state_dir", "missing: the directory of the party's double-sign state and nonce store")
	case len(f.Chains) == 0:
		return cf.errorf("chains", "missing: the chain ids this party signs for")
	case len(f.Coordinators) == 0:
		return cf.errorf("coordinators", "missing: the coordinators' certificate names or sha256: pins")
	case f.ReclaimAfter < 0 || f.NonceCapacity < 0 || f.ShutdownGrace < 0:
		return cf.errorf("", "reclaim_after, nonce_capacity and shutdown_grace may not be negative")
	}
	for i, ch := range f.Chains {
		if strings.TrimSpace(ch) == "" || len(ch) > 50 {
			return cf.errorf(fmt.Sprintf("chains[%d]", i), "%.60q is not a chain id", ch)
		}
	}
	t, err := partyFileTLS(cf, f.Cert, f.Key, f.CA, f.Coordinators)
	if err != nil {
		return err
	}
	k, _, err := LoadShare(cf.file(f.Share))
	if err != nil {
		return cf.wrap("share", "cannot load it", err)
	}
	s.Config = PartyConfig{Key: k, TLS: t, Coordinators: f.Coordinators, ReclaimAfter: f.ReclaimAfter}
	s.GuardDir, s.NonceDir = PartyDirs(cf.file(f.StateDir))
	for _, d := range []string{s.GuardDir, s.NonceDir} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return cf.wrap("state_dir", "cannot make "+d, err)
		}
	}
	s.Config.Guard = &guard.Config{Dir: s.GuardDir, ChainIDs: f.Chains}
	st, err := frost.OpenNonceStore(k, frost.NonceStoreConfig{FS: guard.DirFS(s.NonceDir), Capacity: f.NonceCapacity})
	if err != nil {
		return cf.wrap("state_dir", "cannot open the nonce store in "+s.NonceDir, err)
	}
	s.Config.Nonces = st
	return nil
}

// MissingState returns the chains of the setup that have no double-sign
// state yet.
func (s *PartySetup) MissingState() ([]string, error) {
	g, err := guard.New(&admission{pub: s.Config.Key.GroupPublicKey()}, *s.Config.Guard)
	if err != nil {
		return nil, err
	}
	defer g.Close()
	return s.missing(g)
}

func (s *PartySetup) missing(g *guard.Guard) ([]string, error) {
	var missing []string
	for _, ch := range s.File.Chains {
		_, err := g.State(context.Background(), ch)
		switch {
		case errors.Is(err, guard.ErrNoState) || errors.Is(err, fs.ErrNotExist):
			missing = append(missing, ch)
		case err != nil:
			return nil, err
		}
	}
	return missing, nil
}

// ImportState sets the double-sign state of st's chain, one of the
// setup's, to st: read from the signer the key moves from (package
// guard/migrate), so that the party signs only what comes after its last
// signature, the later steps of that height and round included. It
// refuses to lower a state (a *guard.DoubleSignError) and a chain the
// setup does not list.
func (s *PartySetup) ImportState(ctx context.Context, st guard.State) error {
	if !slices.Contains(s.File.Chains, st.ChainID) {
		return fmt.Errorf("threshold: chain %q is not in the party's chains %q: %w", st.ChainID, s.File.Chains, signer.ErrInvalidArgument)
	}
	g, err := guard.New(&admission{pub: s.Config.Key.GroupPublicKey()}, *s.Config.Guard)
	if err != nil {
		return err
	}
	defer g.Close()
	return g.Import(ctx, st)
}

// InitState makes the double-sign state of each of the setup's chains that
// has none, at height h: the party signs nothing below h for it. A chain
// that has state keeps it. It returns the chains it initialized.
func (s *PartySetup) InitState(ctx context.Context, h int64) ([]string, error) {
	if h < 1 {
		return nil, fmt.Errorf("threshold: height %d: the first height a party may sign is at least 1: %w", h, signer.ErrInvalidArgument)
	}
	g, err := guard.New(&admission{pub: s.Config.Key.GroupPublicKey()}, *s.Config.Guard)
	if err != nil {
		return nil, err
	}
	defer g.Close()
	missing, err := s.missing(g)
	if err != nil {
		return nil, err
	}
	var done []string
	for _, ch := range missing {
		if err := g.Init(ctx, ch, h); err != nil {
			return done, err
		}
		done = append(done, ch)
	}
	return done, nil
}
