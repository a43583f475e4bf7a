package inprocess

import (
	"context"
	"crypto"
	"fmt"
	"sort"
	"sync"
	"unicode/utf8"

	"github.com/signerkit/signerkit/signer"
)

// Keyring is a set of named keys in process memory: a store for a signing
// service's hot keys, and a stand-in key store in tests. It implements
// signer.KeyGenerator, KeyImporter, KeyLister, KeyOpener and KeyDeleter.
// Labels are unique; each key also gets an ID, four hex digits counting up
// from 0001, never reused. The zero Keyring is empty and ready to use; it
// is safe for concurrent use.
//
// OpenKey returns a Key of its own over a copy of the private key, so
// closing it leaves the keyring's key alone, and deleting a key does not
// stop Signers already open on it.
type Keyring struct {
	mu      sync.RWMutex
	byID    map[string]*ringEntry
	byLabel map[string]*ringEntry
	lastID  uint16
}

type ringEntry struct {
	info signer.KeyInfo
	key  *Key
}

// infoCopy returns e's KeyInfo with a public key of the caller's own.
func (e *ringEntry) infoCopy() signer.KeyInfo {
	i := e.info
	i.Public = copyPublic(i.Public)
	return i
}

var (
	_ signer.KeyGenerator = (*Keyring)(nil)
	_ signer.KeyImporter  = (*Keyring)(nil)
	_ signer.KeyLister    = (*Keyring)(nil)
	_ signer.KeyOpener    = (*Keyring)(nil)
	_ signer.KeyDeleter   = (*Keyring)(nil)
)

// MaxLabel is the longest label a Keyring takes, in bytes.
const MaxLabel = 255

func checkLabel(label string) error {
	if label == "" || len(label) > MaxLabel || !utf8.ValidString(label) {
		return fmt.Errorf("inprocess: label must be 1 to %d bytes of UTF-8: %w", MaxLabel, signer.ErrInvalidArgument)
	}
	return nil
}

// reserve checks that label can be added, before a key is made for it.
func (r *Keyring) reserve(ctx context.Context, label string) error {
	if err := checkLabel(label); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("inprocess: %w", err)
	}
	r.mu.RLock()
	_, taken := r.byLabel[label]
	r.mu.RUnlock()
	if taken {
		return fmt.Errorf("inprocess: key %q: %w", label, signer.ErrKeyExists)
	}
	return nil
}

// add stores k under label unless the label was taken meanwhile, in which
// case it wipes k.
func (r *Keyring) add(label string, k *Key) (signer.KeyInfo, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, taken := r.byLabel[label]; taken {
		k.Close()
		return signer.KeyInfo{}, fmt.Errorf("inprocess: key %q: %w", label, signer.ErrKeyExists)
	}
	if r.lastID == 0xffff {
		k.Close()
		return signer.KeyInfo{}, fmt.Errorf("inprocess: keyring has used all its ids: %w", signer.ErrBusy)
	}
	if r.byID == nil {
		r.byID = make(map[string]*ringEntry)
		r.byLabel = make(map[string]*ringEntry)
	}
	r.lastID++
	e := &ringEntry{
		info: signer.KeyInfo{Label: label, ID: fmt.Sprintf("%04x", r.lastID), Algorithm: k.alg, Public: copyPublic(k.pub)},
		key:  k,
	}
	r.byID[e.info.ID] = e
	r.byLabel[label] = e
	return e.infoCopy(), nil
}

// GenerateKey makes a new key for alg (RSA with DefaultRSABits) under label.
func (r *Keyring) GenerateKey(ctx context.Context, alg signer.Algorithm, label string) (signer.KeyInfo, error) {
	if err := r.reserve(ctx, label); err != nil {
		return signer.KeyInfo{}, err
	}
	k, err := Generate(alg)
	if err != nil {
		return signer.KeyInfo{}, err
	}
	return r.add(label, k)
}

// ImportKey stores a copy of priv (see FromPrivateKey) under label.
func (r *Keyring) ImportKey(ctx context.Context, priv crypto.PrivateKey, alg signer.Algorithm, label string) (signer.KeyInfo, error) {
	if err := r.reserve(ctx, label); err != nil {
		return signer.KeyInfo{}, err
	}
	k, err := FromPrivateKey(priv, alg)
	if err != nil {
		return signer.KeyInfo{}, err
	}
	return r.add(label, k)
}

// ListKeys lists the keys, sorted by label.
func (r *Keyring) ListKeys(ctx context.Context) ([]signer.KeyInfo, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("inprocess: %w", err)
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]signer.KeyInfo, 0, len(r.byID))
	for _, e := range r.byID {
		out = append(out, e.infoCopy())
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Label < out[j].Label })
	return out, nil
}

// lookup finds the entry ref names; the caller holds r.mu.
func (r *Keyring) lookup(ref signer.KeyRef) (*ringEntry, error) {
	var e *ringEntry
	switch {
	case ref.ID != "":
		e = r.byID[ref.ID]
		if e != nil && ref.Label != "" && e.info.Label != ref.Label {
			e = nil
		}
	case ref.Label != "":
		e = r.byLabel[ref.Label]
	default:
		return nil, fmt.Errorf("inprocess: a key reference needs a label or an id: %w", signer.ErrInvalidArgument)
	}
	if e == nil {
		return nil, fmt.Errorf("inprocess: key %v: %w", ref, signer.ErrKeyNotFound)
	}
	return e, nil
}

// OpenKey returns a Signer over a copy of the key ref names, using
// ref.Algorithm when set (for an RSA key, RSAPKCS1v15 or RSAPSS).
func (r *Keyring) OpenKey(ctx context.Context, ref signer.KeyRef) (signer.Signer, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("inprocess: %w", err)
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	e, err := r.lookup(ref)
	if err != nil {
		return nil, err
	}
	k, err := e.key.clone()
	if err != nil {
		return nil, err
	}
	if a := ref.Algorithm; a != 0 && a != k.alg {
		if !a.IsRSA() || !k.alg.IsRSA() {
			k.Close()
			return nil, fmt.Errorf("inprocess: key %v is %v: %w", ref, k.alg, signer.ErrInvalidArgument)
		}
		k.alg = a
	}
	return k, nil
}

// DeleteKey removes the key ref names and wipes the keyring's copy.
func (r *Keyring) DeleteKey(ctx context.Context, ref signer.KeyRef) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("inprocess: %w", err)
	}
	r.mu.Lock()
	e, err := r.lookup(ref)
	if err == nil {
		delete(r.byID, e.info.ID)
		delete(r.byLabel, e.info.Label)
	}
	r.mu.Unlock()
	if err != nil {
		return err
	}
	return e.key.Close()
}

// Close wipes every key in the keyring and empties it.
func (r *Keyring) Close() error {
	r.mu.Lock()
	entries := r.byID
	r.byID, r.byLabel = nil, nil
	r.mu.Unlock()
	for _, e := range entries {
		e.key.Close()
	}
	return nil
}
