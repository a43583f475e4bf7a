package signertest

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"encoding/hex"
	"errors"
	"fmt"
	"testing"

	"github.com/signerkit/signerkit/signer"
)

// KeyStoreOptions tunes CheckKeyStore to a store.
type KeyStoreOptions struct {
	// Algorithms are the algorithms to generate and import; nil means all
	// of signer.Algorithms(). A store may refuse one with an error wrapping
	// signer.ErrUnsupported, but must take at least one.
	Algorithms []signer.Algorithm
	// SignerOptions are passed to the signing checks of opened keys.
	SignerOptions Options
}

// RunKeyStore runs CheckKeyStore as a subtest of t.
func RunKeyStore(t *testing.T, store any, opts KeyStoreOptions) {
	t.Helper()
	t.Run("KeyStore", func(t *testing.T) {
		if err := CheckKeyStore(store, opts); err != nil {
			t.Error(err)
		}
	})
}

// CheckKeyStore checks a key store (a value implementing some of
// signer.KeyGenerator, KeyImporter, KeyLister, KeyOpener and KeyDeleter;
// it must implement KeyLister and KeyOpener): keys it generates or imports
// are listed with their public key; open by label, by ID, and by both (a
// label and an ID of different keys find nothing) as Signers whose
// signatures verify, RSA keys also for the other scheme; keep their label
// (a second key under it fails with ErrKeyExists); and are gone once
// deleted (ErrKeyNotFound). It works
// under labels starting with "signertest-" and deletes what it made when
// the store can. It returns nil or an error listing every failure.
func CheckKeyStore(store any, opts KeyStoreOptions) error {
	c := newChecker(nil, opts.SignerOptions)
	c.runCheck(check{"KeyStore", func(c *checker) { checkKeyStore(c, store, opts) }})
	var errs []error
	for _, f := range c.failures() {
		errs = append(errs, fmt.Errorf("KeyStore: %s", f))
	}
	return errors.Join(errs...)
}

func checkKeyStore(c *checker, store any, opts KeyStoreOptions) {
	s := newStoreCheck(c, store)
	algs := opts.Algorithms
	if algs == nil {
		algs = signer.Algorithms()
	}
	// Whatever happens, leave no key behind on a real device.
	defer s.deleteLeftovers()
	took := 0
	for _, a := range algs {
		if s.gen != nil && s.generate(a) {
			took++
		}
		if s.imp != nil && s.importKey(a) {
			took++
		}
	}
	if took == 0 {
		c.errorf("the store took no key of %v", algs)
	}
	if _, err := s.opener.OpenKey(c.callCtx(), signer.KeyRef{Label: s.label("absent", signer.Ed25519)}); !errors.Is(err, signer.ErrKeyNotFound) {
		c.errorf("OpenKey of a label never used: got %s, want an error wrapping ErrKeyNotFound", describe(err))
	}
	if s.del == nil {
		return
	}
	s.checkDeletes()
}

// storeCheck is one run of checkKeyStore: the store's interfaces, the tag
// that makes the run's labels its own, and the keys it made and deleted.
type storeCheck struct {
	*checker
	lister  signer.KeyLister
	opener  signer.KeyOpener
	gen     signer.KeyGenerator // nil when the store does not generate
	imp     signer.KeyImporter  // nil when the store does not import
	del     signer.KeyDeleter   // nil when the store does not delete
	tag     []byte
	made    []signer.KeyInfo
	deleted map[string]bool // by label
}

// newStoreCheck finds the store's interfaces, failing the check when it
// cannot list, open, or make a key.
func newStoreCheck(c *checker, store any) *storeCheck {
	lister, ok := store.(signer.KeyLister)
	if !ok {
		c.fatalf("%T does not implement signer.KeyLister", store)
	}
	opener, ok := store.(signer.KeyOpener)
	if !ok {
		c.fatalf("%T does not implement signer.KeyOpener", store)
	}
	gen, _ := store.(signer.KeyGenerator)
	imp, _ := store.(signer.KeyImporter)
	del, _ := store.(signer.KeyDeleter)
	if gen == nil && imp == nil {
		c.fatalf("%T implements neither signer.KeyGenerator nor signer.KeyImporter: nothing to check with", store)
	}
	return &storeCheck{checker: c, lister: lister, opener: opener, gen: gen, imp: imp, del: del,
		tag: randomBytes(4), deleted: map[string]bool{}}
}

// label returns the run's label for a key of a made how ("gen", "imp").
func (s *storeCheck) label(how string, a signer.Algorithm) string {
	return fmt.Sprintf("signertest-%s-%s-%s", how, a, hex.EncodeToString(s.tag))
}

// generate checks a generated key of a, and that a second under its label
// fails with ErrKeyExists, reporting whether the store took it.
func (s *storeCheck) generate(a signer.Algorithm) bool {
	l := s.label("gen", a)
	ki, err := s.gen.GenerateKey(s.callCtx(), a, l)
	switch {
	case errors.Is(err, signer.ErrUnsupported):
		return false
	case err != nil:
		s.errorf("GenerateKey(%v, %q): %v", a, l, err)
		return false
	}
	s.made = append(s.made, ki)
	s.checkStoredKey(s.lister, s.opener, ki, a, l, nil)
	if _, err := s.gen.GenerateKey(s.callCtx(), a, l); !errors.Is(err, signer.ErrKeyExists) {
		s.errorf("GenerateKey(%v, %q) a second time: got %s, want an error wrapping ErrKeyExists", a, l, describe(err))
	}
	s.checkStoredKey(s.lister, s.opener, ki, a, l, nil) // the first key survives
	return true
}

// importKey checks an imported key of a, reporting whether the store
// took it.
func (s *storeCheck) importKey(a signer.Algorithm) bool {
	priv, err := privateKeyFor(a)
	if err != nil {
		s.errorf("making a %v key to import: %v", a, err)
		return false
	}
	l := s.label("imp", a)
	ki, err := s.imp.ImportKey(s.callCtx(), priv, a, l)
	switch {
	case errors.Is(err, signer.ErrUnsupported):
		return false
	case err != nil:
		s.errorf("ImportKey(%v, %q): %v", a, l, err)
		return false
	}
	s.made = append(s.made, ki)
	s.checkStoredKey(s.lister, s.opener, ki, a, l, priv.(crypto.Signer).Public())
	return true
}

// checkDeletes deletes every key the run made and checks each is gone:
// not opened by its reference or its label, not deleted twice, not
// listed.
func (s *storeCheck) checkDeletes() {
	for _, ki := range s.made {
		if err := s.del.DeleteKey(s.callCtx(), ki.Ref()); err != nil {
			s.errorf("DeleteKey(%v): %v", ki.Ref(), err)
			continue
		}
		s.deleted[ki.Label] = true
		for _, ref := range []signer.KeyRef{ki.Ref(), {Label: ki.Label}} {
			if sg, err := s.opener.OpenKey(s.callCtx(), ref); !errors.Is(err, signer.ErrKeyNotFound) {
				s.errorf("OpenKey(%v) after DeleteKey: got %s, want an error wrapping ErrKeyNotFound", ref, describe(err))
				if sg != nil {
					sg.Close()
				}
			}
		}
		if err := s.del.DeleteKey(s.callCtx(), ki.Ref()); !errors.Is(err, signer.ErrKeyNotFound) {
			s.errorf("DeleteKey(%v) twice: got %s, want an error wrapping ErrKeyNotFound", ki.Ref(), describe(err))
		}
	}
	keys, err := s.lister.ListKeys(s.callCtx())
	if err != nil {
		s.errorf("ListKeys: %v", err)
	}
	for _, k := range keys {
		for _, ki := range s.made {
			if k.Label == ki.Label {
				s.errorf("ListKeys still lists %q after DeleteKey", ki.Label)
			}
		}
	}
}

// deleteLeftovers deletes, when the store can, the keys the run made and
// has not deleted, whatever stopped it.
func (s *storeCheck) deleteLeftovers() {
	if s.del == nil {
		return
	}
	for _, ki := range s.made {
		if !s.deleted[ki.Label] {
			s.del.DeleteKey(s.callCtx(), ki.Ref())
		}
	}
}

// checkStoredKey checks that the key described by ki, made for alg under
// label (with public key want, when known), is listed and signs.
func (c *checker) checkStoredKey(lister signer.KeyLister, opener signer.KeyOpener, ki signer.KeyInfo, a signer.Algorithm, label string, want crypto.PublicKey) {
	if ki.Label != label || ki.Algorithm != a {
		c.errorf("KeyInfo for %q: label %q, algorithm %v; want %q, %v", label, ki.Label, ki.Algorithm, label, a)
	}
	if err := a.CheckKey(ki.Public); err != nil {
		c.errorf("KeyInfo for %q: %v", label, err)
		return
	}
	if want != nil && !equalKey(want, ki.Public) {
		c.errorf("KeyInfo for imported %q has another public key than the one imported", label)
	}
	keys, err := lister.ListKeys(c.callCtx())
	if err != nil {
		c.errorf("ListKeys: %v", err)
	}
	listed := false
	for i, k := range keys {
		if i > 0 && keys[i-1].Label > k.Label {
			c.errorf("ListKeys is not sorted by label: %q before %q", keys[i-1].Label, k.Label)
		}
		if k.Label == label {
			listed = true
			if k.Algorithm != a || !equalKey(ki.Public, k.Public) {
				c.errorf("ListKeys describes %q as %v with another public key", label, k.Algorithm)
			}
		}
	}
	if !listed {
		c.errorf("ListKeys does not list %q", label)
	}
	refs := []signer.KeyRef{{Label: label}, ki.Ref()}
	if ki.ID != "" {
		refs = append(refs, signer.KeyRef{Label: label, ID: ki.ID})
		wrong := signer.KeyRef{Label: label + "-other", ID: ki.ID}
		if s, err := opener.OpenKey(c.callCtx(), wrong); !errors.Is(err, signer.ErrKeyNotFound) {
			c.errorf("OpenKey(%v), whose label and id name different keys: got %s, want an error wrapping ErrKeyNotFound", wrong, describe(err))
			if s != nil {
				s.Close()
			}
		}
	}
	for _, ref := range refs {
		c.checkOpen(opener, ref, ki.Public, a)
	}
	if a.IsRSA() {
		other := signer.RSAPSS
		if a == signer.RSAPSS {
			other = signer.RSAPKCS1v15
		}
		ref := ki.Ref()
		ref.Algorithm = other
		c.checkOpen(opener, ref, ki.Public, other)
	}
}

// checkOpen opens ref and checks that it signs as alg under pub.
func (c *checker) checkOpen(opener signer.KeyOpener, ref signer.KeyRef, pub crypto.PublicKey, a signer.Algorithm) {
	s, err := opener.OpenKey(c.callCtx(), ref)
	if err != nil {
		c.errorf("OpenKey(%v): %v", ref, err)
		return
	}
	defer s.Close()
	if !equalKey(pub, s.Public()) {
		c.errorf("OpenKey(%v) opens a key with another public key", ref)
	}
	alg, err := signer.AlgorithmOf(s)
	if err != nil || alg != a {
		c.errorf("OpenKey(%v): algorithm %v (%v), want %v", ref, alg, err, a)
		return
	}
	c.signAndVerify(signerUnderTest{s, alg}, c.size(64), fmt.Sprintf("key opened from the store as %v", ref))
}

// privateKeyFor makes a key of the kind a uses with the standard library.
func privateKeyFor(a signer.Algorithm) (crypto.PrivateKey, error) {
	switch {
	case a == signer.Ed25519:
		_, priv, err := ed25519.GenerateKey(rand.Reader)
		return priv, err
	case a.IsECDSA():
		return ecdsa.GenerateKey(a.Curve(), rand.Reader)
	case a.IsRSA():
		return rsa.GenerateKey(rand.Reader, 2048)
	}
	return nil, fmt.Errorf("no key for %v", a)
}
