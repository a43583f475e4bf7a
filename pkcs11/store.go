//go:build cgo

package pkcs11

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	p11 "github.com/miekg/pkcs11"

	"github.com/signerkit/signerkit/signer"
)

// Store is an opened PKCS#11 token: a pool of logged-in sessions and the
// keys on it. It implements signer.KeyOpener, KeyLister, KeyGenerator,
// KeyImporter and KeyDeleter. A Store is safe for concurrent use; the
// Signers opened from it share its pool and keep it open until they are
// closed too.
type Store struct {
	pool        *pool
	label       string
	slot        uint
	signTimeout time.Duration // Config.SignTimeout, or its default

	mu     sync.Mutex
	refs   int  // the Store itself while open, plus one per open Signer
	closed bool // Close was called
}

var (
	_ signer.KeyOpener    = (*Store)(nil)
	_ signer.KeyLister    = (*Store)(nil)
	_ signer.KeyGenerator = (*Store)(nil)
	_ signer.KeyImporter  = (*Store)(nil)
	_ signer.KeyDeleter   = (*Store)(nil)
)

// OpenStore loads cfg.Module (or shares it, if loaded already), finds the
// token cfg selects and logs in with cfg.Secret, so that a wrong PIN fails
// here, as a *PINError. cfg.Key is ignored. Close the Store when done.
// OpenStore returns when ctx ends even if the module hangs; a Store it
// then opens anyway is closed.
func OpenStore(ctx context.Context, cfg Config) (*Store, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("pkcs11: open: %w", err)
	}
	return withContext(ctx, "open", func() (*Store, error) { return openStore(ctx, cfg) }, (*Store).Close)
}

// Open opens the token cfg selects, as OpenStore does, and the key cfg.Key
// names on it (a label, an ID or both; naming none is an error wrapping
// signer.ErrInvalidArgument). The Signer holds the token's sessions and
// module: its Close releases them. Open returns when ctx ends even if the
// module hangs.
func Open(ctx context.Context, cfg Config) (*Signer, error) {
	if cfg.Key.Label == "" && cfg.Key.ID == "" {
		return nil, fmt.Errorf("pkcs11: Config.Key names no key (give a label, an id or both; object= or id= in a URI): %w", signer.ErrInvalidArgument)
	}
	if _, err := refTemplate(cfg.Key); err != nil {
		return nil, err
	}
	st, err := OpenStore(ctx, cfg)
	if err != nil {
		return nil, err
	}
	defer st.Close() // the Signer holds its own reference
	return st.openKey(ctx, cfg.Key)
}

// withContext runs f, on a goroutine when ctx can end, and returns its
// result, or ctx's error when ctx ends first; then undo is applied to what
// f returns in the end.
func withContext[T any](ctx context.Context, what string, f func() (T, error), undo func(T) error) (T, error) {
	if ctx.Done() == nil {
		return f()
	}
	type result struct {
		v   T
		err error
	}
	ch := make(chan result, 1)
	go func() {
		v, err := f()
		ch <- result{v, err}
	}()
	select {
	case r := <-ch:
		return r.v, r.err
	case <-ctx.Done():
		go func() {
			if r := <-ch; r.err == nil {
				undo(r.v)
			}
		}()
		var zero T
		return zero, fmt.Errorf("pkcs11: %s: %w", what, ctx.Err())
	}
}

func openStore(ctx context.Context, cfg Config) (*Store, error) {
	mod, err := loadModule(cfg.Module, cfg.Locking)
	if err != nil {
		return nil, err
	}
	slot, info, err := findToken(mod, cfg)
	if err != nil {
		mod.release()
		return nil, err
	}
	t := &Store{label: info.Label, slot: slot, refs: 1, signTimeout: cfg.signTimeout()}
	t.pool = newPool(mod, slot, info.Label, cfg.Secret, cfg.poolSize())
	if cfg.faults {
		t.pool.faults = new(faults)
	}
	// One session now: it proves the token answers and the PIN is right,
	// and the first sign finds it ready.
	if err := t.pool.do(ctx, &opStats{}, func(p11.SessionHandle) error { return nil }); err != nil {
		t.pool.close()
		return nil, err
	}
	return t, nil
}

// findToken returns the slot of the token cfg selects.
func findToken(mod *module, cfg Config) (uint, p11.TokenInfo, error) {
	slots, err := mod.ctx.GetSlotList(true)
	if err != nil {
		return 0, p11.TokenInfo{}, wrap("C_GetSlotList", err)
	}
	type found struct {
		slot uint
		info p11.TokenInfo
	}
	var matches []found
	var labels []string
	for _, s := range slots {
		if cfg.SlotID != nil && s != *cfg.SlotID {
			continue
		}
		info, err := mod.ctx.GetTokenInfo(s)
		if err != nil {
			continue // a slot whose token went away meanwhile
		}
		info.Label = strings.TrimSpace(info.Label)
		if info.Flags&p11.CKF_TOKEN_INITIALIZED == 0 {
			continue // SoftHSM's spare slot, a blank card
		}
		labels = append(labels, fmt.Sprintf("%q", info.Label))
		if match(cfg.TokenLabel, info.Label) && match(cfg.TokenSerial, info.SerialNumber) &&
			match(cfg.TokenManufacturer, info.ManufacturerID) && match(cfg.TokenModel, info.Model) {
			matches = append(matches, found{s, info})
		}
	}
	switch {
	case len(matches) == 1:
		return matches[0].slot, matches[0].info, nil
	case len(matches) == 0:
		return 0, p11.TokenInfo{}, fmt.Errorf("pkcs11: no token matches %s in %s (tokens: %s): %w",
			describeToken(cfg), mod.path, strings.Join(labels, ", "), signer.ErrDeviceNotFound)
	}
	return 0, p11.TokenInfo{}, fmt.Errorf("pkcs11: %d tokens match %s (tokens: %s); name one by label, serial or slot-id: %w",
		len(matches), describeToken(cfg), strings.Join(labels, ", "), signer.ErrInvalidArgument)
}

func match(want, got string) bool { return want == "" || want == strings.TrimSpace(got) }

func describeToken(cfg Config) string {
	var parts []string
	if cfg.TokenLabel != "" {
		parts = append(parts, fmt.Sprintf("token=%q", cfg.TokenLabel))
	}
	if cfg.TokenSerial != "" {
		parts = append(parts, fmt.Sprintf("serial=%q", cfg.TokenSerial))
	}
	if cfg.TokenManufacturer != "" {
		parts = append(parts, fmt.Sprintf("manufacturer=%q", cfg.TokenManufacturer))
	}
	if cfg.TokenModel != "" {
		parts = append(parts, fmt.Sprintf("model=%q", cfg.TokenModel))
	}
	if cfg.SlotID != nil {
		parts = append(parts, fmt.Sprintf("slot-id=%d", *cfg.SlotID))
	}
	if len(parts) == 0 {
		return "(any token)"
	}
	return strings.Join(parts, " ")
}

// Label returns the token's label.
func (t *Store) Label() string { return t.label }

// SlotID returns the slot the token is in.
func (t *Store) SlotID() uint { return t.slot }

// acquire takes a reference for a Signer; it fails once the Store is
// closed.
func (t *Store) acquire() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return fmt.Errorf("pkcs11: token %q: %w", t.label, signer.ErrClosed)
	}
	t.refs++
	return nil
}

func (t *Store) release() {
	t.mu.Lock()
	t.refs--
	last := t.refs == 0
	t.mu.Unlock()
	if last {
		t.pool.close()
	}
}

// Close closes the Store. Signers opened from it stay usable until they
// are closed; the sessions close, and the module is finalized if no one
// else uses it, when the last of them is. Close is idempotent.
func (t *Store) Close() error {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return nil
	}
	t.closed = true
	t.mu.Unlock()
	t.release()
	return nil
}

func (t *Store) checkOpen() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return fmt.Errorf("pkcs11: token %q: %w", t.label, signer.ErrClosed)
	}
	return nil
}

// OpenKey opens the private key ref names; the Signer it returns is a
// *Signer. ref.Algorithm, when set, must fit the key: it is how an RSA key
// signs with PSS. The Signer keeps the Store's pool open until it is
// closed. OpenKey returns when ctx ends even if the token hangs; a Signer
// it then opens anyway is closed.
func (t *Store) OpenKey(ctx context.Context, ref signer.KeyRef) (signer.Signer, error) {
	s, err := t.openKey(ctx, ref)
	if err != nil {
		return nil, err // not s: a nil *Signer in the interface is not nil
	}
	return s, nil
}

func (t *Store) openKey(ctx context.Context, ref signer.KeyRef) (*Signer, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("pkcs11: open key: %w", err)
	}
	return withContext(ctx, "open key", func() (*Signer, error) { return t.key(ctx, ref) }, (*Signer).Close)
}

func (t *Store) key(ctx context.Context, ref signer.KeyRef) (*Signer, error) {
	if err := t.acquire(); err != nil {
		return nil, err
	}
	ko, err := t.findKey(ctx, ref, &opStats{})
	if err != nil {
		t.release()
		return nil, err
	}
	alg := ko.alg
	if ref.Algorithm != 0 {
		if ref.Algorithm != alg && !(alg.IsRSA() && ref.Algorithm.IsRSA()) {
			t.release()
			return nil, fmt.Errorf("pkcs11: key %v is a %v key: %w", ref, alg, signer.ErrUnsupported)
		}
		alg = ref.Algorithm
	}
	return newSigner(t, ko, alg), nil
}
