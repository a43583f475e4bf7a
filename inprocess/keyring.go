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
// The zero Keyring is empty and ready to use; it is safe for concurrent
// use.
//
// OpenKey returns a Key of its own over a copy of the private key, so
// closing it leaves the keyring's key alone, and deleting a key does not
// stop Signers already open on it.
type Keyring struct {
	mu   sync.RWMutex
	keys map[string]*Key
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

func info(label string, k *Key) signer.KeyInfo {
	return signer.KeyInfo{Label: label, Algorithm: k.alg, Public: k.pub}
}

// add stores k under label unless the label is taken, in which case it
// wipes k.
func (r *Keyring) add(label string, k *Key) (signer.KeyInfo, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, taken := r.keys[label]; taken {
		k.Close()
		return signer.KeyInfo{}, fmt.Errorf("inprocess: key %q: %w", label, signer.ErrKeyExists)
	}
	if r.keys == nil {
		r.keys = make(map[string]*Key)
	}
	r.keys[label] = k
	return info(label, k), nil
}

// GenerateKey makes a new key for alg (RSA with DefaultRSABits) under label.
func (r *Keyring) GenerateKey(ctx context.Context, alg signer.Algorithm, label string) (signer.KeyInfo, error) {
	if err := checkLabel(label); err != nil {
		return signer.KeyInfo{}, err
	}
	if err := ctx.Err(); err != nil {
		return signer.KeyInfo{}, fmt.Errorf("inprocess: %w", err)
	}
	k, err := Generate(alg)
	if err != nil {
		return signer.KeyInfo{}, err
	}
	return r.add(label, k)
}

// ImportKey stores a copy of priv (see FromPrivateKey) under label.
func (r *Keyring) ImportKey(ctx context.Context, priv crypto.PrivateKey, alg signer.Algorithm, label string) (signer.KeyInfo, error) {
	if err := checkLabel(label); err != nil {
		return signer.KeyInfo{}, err
	}
	if err := ctx.Err(); err != nil {
		return signer.KeyInfo{}, fmt.Errorf("inprocess: %w", err)
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
	out := make([]signer.KeyInfo, 0, len(r.keys))
	for label, k := range r.keys {
		out = append(out, info(label, k))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Label < out[j].Label })
	return out, nil
}

// OpenKey returns a Signer over a copy of the key stored under label.
func (r *Keyring) OpenKey(ctx context.Context, label string) (signer.Signer, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("inprocess: %w", err)
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	k, ok := r.keys[label]
	if !ok {
		return nil, fmt.Errorf("inprocess: key %q: %w", label, signer.ErrKeyNotFound)
	}
	return k.clone()
}

// DeleteKey removes the key stored under label and wipes the keyring's
// copy.
func (r *Keyring) DeleteKey(ctx context.Context, label string) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("inprocess: %w", err)
	}
	r.mu.Lock()
	k, ok := r.keys[label]
	delete(r.keys, label)
	r.mu.Unlock()
	if !ok {
		return fmt.Errorf("inprocess: key %q: %w", label, signer.ErrKeyNotFound)
	}
	return k.Close()
}

// Close wipes every key in the keyring and empties it.
func (r *Keyring) Close() error {
	r.mu.Lock()
	keys := r.keys
	r.keys = nil
	r.mu.Unlock()
	for _, k := range keys {
		k.Close()
	}
	return nil
}
