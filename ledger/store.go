package ledger

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/hex"
	"fmt"
	"strings"
	"sync"

	"github.com/signerkit/signerkit/signer"
)

// Store is the device seen as a key store. The validator app holds exactly
// one key, Ed25519, with no label: ListKeys lists it, with its public key
// in lower-case hex as its ID, and OpenKey opens it. The app can neither
// generate, import nor delete keys, so Store implements signer.KeyLister
// and signer.KeyOpener only.
//
// A Store holds no transport open: OpenStore reads the key and closes the
// transport again, and each OpenKey opens its own Signer. So the Signers
// it returns have the device to themselves (Speculos serves one client at
// a time, and two HID handles would each see the other's replies). A
// Store is safe for concurrent use.
type Store struct {
	cfg  Config
	info signer.KeyInfo

	mu     sync.Mutex
	closed bool
}

var (
	_ signer.KeyLister = (*Store)(nil)
	_ signer.KeyOpener = (*Store)(nil)
)

// OpenStore opens the device as Open does, reads the app's public key, and
// closes the transport again. Errors are those of Open.
func OpenStore(ctx context.Context, cfg Config) (*Store, error) {
	s, err := Open(ctx, cfg)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	return &Store{cfg: cfg, info: keyInfo(s.pub)}, nil
}

func keyInfo(pub ed25519.PublicKey) signer.KeyInfo {
	return signer.KeyInfo{ID: hex.EncodeToString(pub), Algorithm: signer.Ed25519, Public: pub}
}

// ListKeys returns the app's one key as OpenStore read it: no label, its
// public key in lower-case hex as ID, Algorithm signer.Ed25519. It does
// no I/O; after Close it returns an error wrapping signer.ErrClosed.
func (st *Store) ListKeys(ctx context.Context) ([]signer.KeyInfo, error) {
	if err := st.check(ctx); err != nil {
		return nil, err
	}
	ki := st.info
	ki.Public = ed25519.PublicKey(bytes.Clone(st.info.Public.(ed25519.PublicKey)))
	return []signer.KeyInfo{ki}, nil
}

// OpenKey opens the app's key as Open does and returns its *Signer. The
// zero KeyRef names the one key, whatever it is; a ref with an ID opens
// it only if the device's key is still the one the ID names (another
// Ledger, or the same one restored from another seed, is
// signer.ErrKeyNotFound). A ref with a label names nothing on this device
// (ErrKeyNotFound), and one with an Algorithm other than signer.Ed25519 is
// refused with an error wrapping signer.ErrUnsupported.
func (st *Store) OpenKey(ctx context.Context, ref signer.KeyRef) (signer.Signer, error) {
	if err := st.check(ctx); err != nil {
		return nil, err
	}
	if ref.Algorithm != 0 && ref.Algorithm != signer.Ed25519 {
		return nil, fmt.Errorf("ledger: the validator app's key is Ed25519, not %v: %w", ref.Algorithm, signer.ErrUnsupported)
	}
	if ref.Label != "" {
		return nil, fmt.Errorf("ledger: no key labelled %q: the validator app's one key has no label: %w", truncate(ref.Label), signer.ErrKeyNotFound)
	}
	if ref.ID != "" && !strings.EqualFold(ref.ID, st.info.ID) {
		return nil, fmt.Errorf("ledger: no key with id %q: the device's key is %s: %w", truncate(ref.ID), st.info.ID, signer.ErrKeyNotFound)
	}
	s, err := Open(ctx, st.cfg)
	if err != nil {
		return nil, err
	}
	if id := hex.EncodeToString(s.pub); ref.ID != "" && !strings.EqualFold(ref.ID, id) {
		s.Close()
		return nil, fmt.Errorf("ledger: no key with id %q: the device's key is now %s (another Ledger or seed): %w", truncate(ref.ID), id, signer.ErrKeyNotFound)
	}
	return s, nil
}

func (st *Store) check(ctx context.Context) error {
	st.mu.Lock()
	closed := st.closed
	st.mu.Unlock()
	if closed {
		return fmt.Errorf("ledger: store: %w", signer.ErrClosed)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("ledger: %w", err)
	}
	return nil
}

// Close closes the store; Signers it opened stay open until closed
// themselves. ListKeys and OpenKey after Close return an error wrapping
// signer.ErrClosed. Close is idempotent.
func (st *Store) Close() error {
	st.mu.Lock()
	st.closed = true
	st.mu.Unlock()
	return nil
}
