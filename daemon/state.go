package daemon

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ed25519"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"

	"github.com/signerkit/signerkit/guard"
	"github.com/signerkit/signerkit/internal/atomicfile"
	"github.com/signerkit/signerkit/signer"
)

// KeysFile is the file in the state directory that binds each chain to the
// validator public key its state was made with.
const KeysFile = "signerkit-keys.json"

// boundKeys reads the chain → public key bindings of dir.
func boundKeys(dir string) (map[string]string, error) {
	b, err := os.ReadFile(filepath.Join(dir, KeysFile))
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]string{}, nil
	}
	if err != nil {
		return nil, err
	}
	m := map[string]string{}
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%s is damaged: %v (it is never reset: restore it, or remove it to bind each chain again to the key it starts with)", filepath.Join(dir, KeysFile), err)
	}
	return m, nil
}

// BoundKey returns the public key chainID's state is bound to, or nil.
func BoundKey(dir, chainID string) (ed25519.PublicKey, error) {
	kb, err := readKeyBindings(dir)
	if err != nil {
		return nil, err
	}
	return kb.key(chainID)
}

// keyBindings are a state directory's bindings, read once (when the
// daemon starts) for all its chains.
type keyBindings struct {
	dir string
	m   map[string]string
}

// key returns the key chainID's state is bound to, nil if none.
func (kb *keyBindings) key(chainID string) (ed25519.PublicKey, error) {
	if h, ok := kb.m[chainID]; ok {
		return hex.DecodeString(h)
	}
	return nil, nil
}

func readKeyBindings(dir string) (*keyBindings, error) {
	m, err := boundKeys(dir)
	if err != nil {
		return nil, err
	}
	return &keyBindings{dir: dir, m: m}, nil
}

// bind checks that chainID's state is bound to pub, binding it on first
// use: the file is written whole to a temporary name, synced, renamed into
// place and the directory synced.
func (kb *keyBindings) bind(chainID string, pub ed25519.PublicKey) error {
	dir, m := kb.dir, kb.m
	if h, ok := m[chainID]; ok {
		old, err := hex.DecodeString(h)
		if err != nil || !bytes.Equal(old, pub) {
			return fmt.Errorf("the key's public key ed25519:%x differs from ed25519:%s, the one this chain's state in %s was made with: "+
				"the state belongs to another key. Point key at the validator's key, or, if the validator's key really changed, "+
				"move the state away and run `signerkit state init` at a height above anything the old key signed", []byte(pub), h, dir)
		}
		return nil
	}
	next := maps.Clone(m)
	next[chainID] = hex.EncodeToString(pub)
	b, err := json.MarshalIndent(next, "", "  ")
	if err != nil {
		return err
	}
	if err := writeFileSync(filepath.Join(dir, KeysFile), append(b, '\n')); err != nil {
		return err
	}
	kb.m = next
	return nil
}

// writeFileSync replaces path by data durably: see writeFileDurable (a
// fresh temporary name opened with O_EXCL and O_NOFOLLOW, mode 0600,
// synced, renamed into place, the directory synced).
func writeFileSync(path string, data []byte) error {
	return writeFileDurable(path, data, atomicfile.RandomHex)
}

// ChainState is one chain's state as `signerkit state show` prints it.
type ChainState struct {
	guard.State
	// Key is the validator public key the state is bound to, or nil
	// before the daemon's first start.
	Key ed25519.PublicKey
	// Err is why the chain would not sign: no state, or a damaged state
	// file (a *guard.CorruptError, with the slots in Report).
	Err error
	// Report is what the state file holds, slot by slot.
	Report *guard.Report
}

// noKey is the signer.Signer under the Guard that state commands open: it
// reads and initialises state and never signs.
type noKey struct{}

func (noKey) Public() crypto.PublicKey { return ed25519.PublicKey(make([]byte, ed25519.PublicKeySize)) }
func (noKey) Close() error             { return nil }
func (noKey) Sign(io.Reader, []byte, crypto.SignerOpts) ([]byte, error) {
	return nil, signer.ErrUnsupported
}
func (noKey) SignContext(context.Context, []byte) ([]byte, error) { return nil, signer.ErrUnsupported }

// ShowState reads the state of each of cfg's chains from the state
// directory, read-only and checksum-verified, without a lock and without
// opening any key: it works beside a running daemon, and shows the state
// as last synced. running says whether a daemon holds the directory.
func ShowState(ctx context.Context, cfg *Config) (states []ChainState, running bool, err error) {
	if cfg.State != "" {
		return showShared(ctx, cfg)
	}
	if err := CheckStateDir(cfg.StateDir); err != nil {
		return nil, false, err
	}
	running = StateDirInUse(cfg.StateDir)
	kb, berr := readKeyBindings(cfg.StateDir) // once for all chains
	fsys := guard.DirFS(cfg.StateDir)
	for _, ch := range cfg.Chains {
		if err := ctx.Err(); err != nil {
			return nil, running, err
		}
		rep, err := guard.Inspect(fsys, ch.ID)
		if err != nil {
			return nil, running, fmt.Errorf("signerkit: chain %q: %w", ch.ID, err)
		}
		cs := ChainState{State: rep.State, Err: rep.Err, Report: rep}
		cs.ChainID = ch.ID
		kerr := berr
		if kerr == nil {
			cs.Key, kerr = kb.key(ch.ID)
		}
		if kerr != nil && cs.Err == nil {
			cs.Err = kerr
		}
		states = append(states, cs)
	}
	return states, running, nil
}

// InitState gives chainID its state at height h, or raises it to h; it
// refuses to lower a state. It makes stateDir (mode 0700) when it does
// not exist and its parent does; a missing parent is an error that says
// how to make it (a typo in state_dir should not make a tree). It takes
// the state directory's lock, so it is refused (ErrStateInUse) while the
// daemon runs.
func InitState(ctx context.Context, stateDir, chainID string, h int64) error {
	if err := makeStateDir(stateDir); err != nil {
		return err
	}
	l, err := LockStateDir(stateDir)
	if err != nil {
		return err
	}
	defer l.Close()
	return initState(ctx, guard.Config{Dir: stateDir}, chainID, h)
}

// InitStateFS is InitState on a guard.FS (Options.StateFS).
func InitStateFS(ctx context.Context, fsys guard.FS, chainID string, h int64) error {
	return initState(ctx, guard.Config{FS: fsys}, chainID, h)
}

// RepairState starts chainID's damaged state again at height h (see
// guard.Guard.Repair): h must be above the last height the validator may
// have signed, as the chain shows it, and above every height the damaged
// file reads. The damaged file is kept beside it; RepairState returns its
// path. It takes the state directory's lock, so it is refused
// (ErrStateInUse) while the daemon runs.
func RepairState(ctx context.Context, stateDir, chainID string, h int64) (string, error) {
	l, err := LockStateDir(stateDir)
	if err != nil {
		return "", err
	}
	defer l.Close()
	g, err := guard.New(noKey{}, guard.Config{Dir: stateDir})
	if err != nil {
		return "", fmt.Errorf("signerkit: %w", err)
	}
	defer g.Close()
	kept, err := g.Repair(ctx, chainID, h)
	if err != nil {
		return "", fmt.Errorf("signerkit: state repair: %w", err)
	}
	return filepath.Join(stateDir, kept), nil
}

func initState(ctx context.Context, cfg guard.Config, chainID string, h int64) error {
	g, err := guard.New(noKey{}, cfg)
	if err != nil {
		return fmt.Errorf("signerkit: %w", err)
	}
	defer g.Close()
	if err := g.Init(ctx, chainID, h); err != nil {
		return fmt.Errorf("signerkit: state init: %w", err)
	}
	return nil
}
