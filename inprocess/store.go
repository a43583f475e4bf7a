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

// Store is a set of named keys in process memory: a store for a signing
// service's hot keys, and a stand-in key store in tests. It implements
// signer.KeyGenerator, KeyImporter, KeyLister, KeyOpener and KeyDeleter.
// Labels are unique; each key also gets an ID, four hex digits counting up
// from 0001, never reused. The zero Store is empty and ready to use;
// OpenStore returns one holding a key file's key. A Store is safe for
// concurrent use.
//
// OpenKey returns a *Signer of its own over a copy of the private key, so
// closing it leaves the store's key alone, and deleting a key does not
// stop Signers already open on it. Close wipes the store's keys; its
// methods fail with signer.ErrClosed from then on.
type Store struct {
	mu      sync.RWMutex
	closed  bool
	byID    map[string]*entry
	byLabel map[string]*entry
	lastID  uint16
}

type entry struct {
	info signer.KeyInfo
	key  *Signer
}

// infoCopy returns e's KeyInfo with a public key of the caller's own.
func (e *entry) infoCopy() signer.KeyInfo {
	i := e.info
	i.Public = copyPublic(i.Public)
	return i
}

var (
	_ signer.KeyGenerator = (*Store)(nil)
	_ signer.KeyImporter  = (*Store)(nil)
	_ signer.KeyLister    = (*Store)(nil)
	_ signer.KeyOpener    = (*Store)(nil)
	_ signer.KeyDeleter   = (*Store)(nil)
)

// MaxLabel is the longest label a Store takes, in bytes.
const MaxLabel = 255

func checkLabel(label string) error {
	if label == "" || len(label) > MaxLabel || !utf8.ValidString(label) {
		return fmt.Errorf("inprocess: label must be 1 to %d bytes of UTF-8: %w", MaxLabel, signer.ErrInvalidArgument)
	}
	return nil
}

// reserve checks that label can be added, before a key is made for it.
func (s *Store) reserve(ctx context.Context, label string) error {
	if err := checkLabel(label); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("inprocess: %w", err)
	}
	s.mu.RLock()
	_, taken := s.byLabel[label]
	closed := s.closed
	s.mu.RUnlock()
	if closed {
		return errStoreClosed
	}
	if taken {
		return fmt.Errorf("inprocess: key %q: %w", label, signer.ErrKeyExists)
	}
	return nil
}

// add stores k under label unless the label was taken meanwhile, in which
// case it wipes k.
func (s *Store) add(label string, k *Signer) (signer.KeyInfo, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		k.Close()
		return signer.KeyInfo{}, errStoreClosed
	}
	if _, taken := s.byLabel[label]; taken {
		k.Close()
		return signer.KeyInfo{}, fmt.Errorf("inprocess: key %q: %w", label, signer.ErrKeyExists)
	}
	if s.lastID == 0xffff {
		k.Close()
		return signer.KeyInfo{}, fmt.Errorf("inprocess: store has used all its ids: %w", signer.ErrBusy)
	}
	if s.byID == nil {
		s.byID = make(map[string]*entry)
		s.byLabel = make(map[string]*entry)
	}
	s.lastID++
	e := &entry{
		info: signer.KeyInfo{Label: label, ID: fmt.Sprintf("%04x", s.lastID), Algorithm: k.alg, Public: copyPublic(k.pub)},
		key:  k,
	}
	s.byID[e.info.ID] = e
	s.byLabel[label] = e
	return e.infoCopy(), nil
}

// GenerateKey makes a new key for alg (RSA with DefaultRSABits) under label.
func (s *Store) GenerateKey(ctx context.Context, alg signer.Algorithm, label string) (signer.KeyInfo, error) {
	if err := s.reserve(ctx, label); err != nil {
		return signer.KeyInfo{}, err
	}
	k, err := Generate(alg)
	if err != nil {
		return signer.KeyInfo{}, err
	}
	return s.add(label, k)
}

// ImportKey stores a copy of priv (see FromPrivateKey) under label.
func (s *Store) ImportKey(ctx context.Context, priv crypto.PrivateKey, alg signer.Algorithm, label string) (signer.KeyInfo, error) {
	if err := s.reserve(ctx, label); err != nil {
		return signer.KeyInfo{}, err
	}
	k, err := FromPrivateKey(priv, alg)
	if err != nil {
		return signer.KeyInfo{}, err
	}
	return s.add(label, k)
}

// ListKeys lists the keys, sorted by label.
func (s *Store) ListKeys(ctx context.Context) ([]signer.KeyInfo, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("inprocess: %w", err)
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return nil, errStoreClosed
	}
	out := make([]signer.KeyInfo, 0, len(s.byID))
	for _, e := range s.byID {
		out = append(out, e.infoCopy())
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Label < out[j].Label })
	return out, nil
}

// lookup finds the entry ref names; the caller holds s.mu.
func (s *Store) lookup(ref signer.KeyRef) (*entry, error) {
	if s.closed {
		return nil, errStoreClosed
	}
	var e *entry
	switch {
	case ref.ID != "":
		e = s.byID[ref.ID]
		if e != nil && ref.Label != "" && e.info.Label != ref.Label {
			e = nil
		}
	case ref.Label != "":
		e = s.byLabel[ref.Label]
	default:
		return nil, fmt.Errorf("inprocess: a key reference needs a label or an id: %w", signer.ErrInvalidArgument)
	}
	if e == nil {
		return nil, fmt.Errorf("inprocess: key %v: %w", ref, signer.ErrKeyNotFound)
	}
	return e, nil
}

// OpenKey returns a *Signer over a copy of the key ref names, using
// ref.Algorithm when set (for an RSA key, RSAPKCS1v15 or RSAPSS; another
// algorithm than the key's is an error wrapping signer.ErrInvalidArgument).
func (s *Store) OpenKey(ctx context.Context, ref signer.KeyRef) (signer.Signer, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("inprocess: %w", err)
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	e, err := s.lookup(ref)
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

// DeleteKey removes the key ref names and wipes the store's copy.
func (s *Store) DeleteKey(ctx context.Context, ref signer.KeyRef) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("inprocess: %w", err)
	}
	s.mu.Lock()
	e, err := s.lookup(ref)
	if err == nil {
		delete(s.byID, e.info.ID)
		delete(s.byLabel, e.info.Label)
	}
	s.mu.Unlock()
	if err != nil {
		return err
	}
	return e.key.Close()
}

var errStoreClosed = fmt.Errorf("inprocess: store: %w", signer.ErrClosed)

// Close wipes every key in the store and empties it; the Store's methods
// fail with signer.ErrClosed from then on. Signers that OpenKey returned
// keep their own copies until they are closed. Close is idempotent.
func (s *Store) Close() error {
	s.mu.Lock()
	s.closed = true
	entries := s.byID
	s.byID, s.byLabel = nil, nil
	s.mu.Unlock()
	for _, e := range entries {
		e.key.Close()
	}
	return nil
}
