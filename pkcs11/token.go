//go:build cgo

package pkcs11

import (
	"context"
	"fmt"
	"strings"
	"sync"

	p11 "github.com/miekg/pkcs11"

	"github.com/signerkit/signerkit/signer"
)

// Token is an opened PKCS#11 token: a pool of logged-in sessions and the
// key store on it. It implements signer.KeyOpener, KeyLister,
// KeyGenerator, KeyImporter and KeyDeleter. A Token is safe for concurrent
// use; the Keys opened from it share its pool and keep it open until they
// are closed too.
type Token struct {
	pool  *pool
	label string
	slot  uint

	mu     sync.Mutex
	refs   int  // the Token itself while open, plus one per open Key
	closed bool // Close was called
}

var (
	_ signer.KeyOpener    = (*Token)(nil)
	_ signer.KeyLister    = (*Token)(nil)
	_ signer.KeyGenerator = (*Token)(nil)
	_ signer.KeyImporter  = (*Token)(nil)
	_ signer.KeyDeleter   = (*Token)(nil)
)

// Open loads cfg.Module (or shares it, if loaded already), finds the token
// cfg selects and logs in with cfg.PIN, so that a wrong PIN fails here, as
// a *PINError. The key fields of cfg are ignored. Close the Token when
// done. Open returns when ctx ends even if the module hangs; a Token it
// then opens anyway is closed.
func Open(ctx context.Context, cfg Config) (*Token, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("pkcs11: open: %w", err)
	}
	return withContext(ctx, "open", func() (*Token, error) { return open(ctx, cfg) }, (*Token).Close)
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

func open(ctx context.Context, cfg Config) (*Token, error) {
	mod, err := loadModule(cfg.Module, cfg.Locking)
	if err != nil {
		return nil, err
	}
	slot, info, err := findToken(mod, cfg)
	if err != nil {
		mod.release()
		return nil, err
	}
	t := &Token{label: info.Label, slot: slot, refs: 1}
	t.pool = newPool(mod, slot, info.Label, cfg.PIN, cfg.poolSize())
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
func (t *Token) Label() string { return t.label }

// SlotID returns the slot the token is in.
func (t *Token) SlotID() uint { return t.slot }

// acquire takes a reference for a Key; it fails once the Token is closed.
func (t *Token) acquire() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return fmt.Errorf("pkcs11: token %q: %w", t.label, signer.ErrClosed)
	}
	t.refs++
	return nil
}

func (t *Token) release() {
	t.mu.Lock()
	t.refs--
	last := t.refs == 0
	t.mu.Unlock()
	if last {
		t.pool.close()
	}
}

// Close closes the Token. Keys opened from it stay usable until they are
// closed; the sessions close, and the module is finalized if no one else
// uses it, when the last of them is. Close is idempotent.
func (t *Token) Close() error {
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

func (t *Token) checkOpen() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return fmt.Errorf("pkcs11: token %q: %w", t.label, signer.ErrClosed)
	}
	return nil
}

// OpenKey opens the private key ref names as a signer.Signer (a *Key).
func (t *Token) OpenKey(ctx context.Context, ref signer.KeyRef) (signer.Signer, error) {
	k, err := t.Key(ctx, ref)
	if err != nil {
		return nil, err
	}
	return k, nil
}

// Key opens the private key ref names. ref.Algorithm, when set, must fit
// the key; it is how an RSA key signs with PSS. The Key keeps the Token's
// pool open until it is closed. Key returns when ctx ends even if the
// token hangs.
func (t *Token) Key(ctx context.Context, ref signer.KeyRef) (*Key, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("pkcs11: open key: %w", err)
	}
	return withContext(ctx, "open key", func() (*Key, error) { return t.key(ctx, ref) }, (*Key).Close)
}

func (t *Token) key(ctx context.Context, ref signer.KeyRef) (*Key, error) {
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
	return newKey(t, ko, alg), nil
}

// OpenKey opens the token and the key cfg selects. Closing the Key closes
// its token.
func OpenKey(ctx context.Context, cfg Config) (*Key, error) {
	t, err := Open(ctx, cfg)
	if err != nil {
		return nil, err
	}
	defer t.Close() // the Key holds its own reference
	return t.Key(ctx, cfg.keyRef())
}

// OpenURI parses an RFC 7512 URI and opens the key it names, like OpenKey.
// pin, when not nil, overrides the URI's pin-source or pin-value.
func OpenURI(ctx context.Context, uri string, pin PINFunc) (*Key, error) {
	u, err := ParseURI(uri)
	if err != nil {
		return nil, err
	}
	cfg, err := u.Config()
	if err != nil {
		return nil, err
	}
	if pin != nil {
		cfg.PIN = pin
	}
	return OpenKey(ctx, cfg)
}
