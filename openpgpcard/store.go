package openpgpcard

import (
	"context"
	"crypto"
	"fmt"
	"sync"

	"github.com/signerkit/signerkit/openpgpcard/internal/iso7816"
	"github.com/signerkit/signerkit/signer"
)

// Store is the card seen as a key store of three keys labelled sig, dec
// and aut. ListKeys lists the slots that hold a key; OpenKey opens one by
// label with the Store's Config (its PIN, its dialer); GenerateKey, given
// Config.AdminPIN, generates a key on the card. A Store holds no
// transport open between calls and is safe for concurrent use.
type Store struct {
	cfg Config

	mu     sync.Mutex
	closed bool
}

var (
	_ signer.KeyLister    = (*Store)(nil)
	_ signer.KeyOpener    = (*Store)(nil)
	_ signer.KeyGenerator = (*Store)(nil)
)

// OpenStore checks that the card answers as an OpenPGP card and returns
// it as a Store. Errors are those of Open.
func OpenStore(ctx context.Context, cfg Config) (*Store, error) {
	dial, err := cfg.dialer()
	if err != nil {
		return nil, err
	}
	l, _, err := connect(ctx, dial)
	if err != nil {
		return nil, err
	}
	l.tr.Close()
	cfg.Dial, cfg.Reader = dial, ""
	return &Store{cfg: cfg}, nil
}

func (st *Store) check(ctx context.Context) error {
	st.mu.Lock()
	closed := st.closed
	st.mu.Unlock()
	if closed {
		return fmt.Errorf("openpgpcard: store: %w", signer.ErrClosed)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("openpgpcard: %w", err)
	}
	return nil
}

// ListKeys returns the keys the card holds, by label (aut, dec, sig). A
// decryption key, which does not sign, has Algorithm 0.
func (st *Store) ListKeys(ctx context.Context) ([]signer.KeyInfo, error) {
	if err := st.check(ctx); err != nil {
		return nil, err
	}
	l, info, err := connect(ctx, st.cfg.Dial)
	if err != nil {
		return nil, err
	}
	defer l.tr.Close()
	var out []signer.KeyInfo
	for _, k := range []Key{KeyAuth, KeyDecrypt, KeySign} {
		resp, err := l.transmit(ctx, "READ PUBLIC KEY", iso7816.Command{INS: 0x47, P1: 0x81, Data: []byte{crt[k], 0x00}})
		if se, ok := err.(*StatusError); ok && se.SW == iso7816.SWReferencedDataNotFound {
			continue
		}
		if err != nil {
			return nil, err
		}
		a := info.attrs[k]
		pub, err := a.parsePublic(resp)
		if err != nil {
			return nil, err
		}
		alg := a.signerAlgorithm()
		if k == KeyDecrypt {
			alg = 0
		}
		out = append(out, signer.KeyInfo{Label: k.String(), Algorithm: alg, Public: pub})
	}
	return out, nil
}

// OpenKey opens the key labelled sig, dec or aut (the zero ref means
// sig). A ref with an ID names nothing (the card's keys have none), and an
// Algorithm other than the key's is refused with signer.ErrUnsupported.
func (st *Store) OpenKey(ctx context.Context, ref signer.KeyRef) (signer.Signer, error) {
	if err := st.check(ctx); err != nil {
		return nil, err
	}
	k := KeySign
	if ref.Label != "" {
		var ok bool
		if k, ok = parseKey(ref.Label); !ok {
			return nil, fmt.Errorf("openpgpcard: no key labelled %q (the card's are sig, dec and aut): %w", truncate(ref.Label), signer.ErrKeyNotFound)
		}
	}
	if ref.ID != "" {
		return nil, fmt.Errorf("openpgpcard: no key with id %q (the card's keys are named by label): %w", truncate(ref.ID), signer.ErrKeyNotFound)
	}
	cfg := st.cfg
	cfg.Key = k
	s, err := Open(ctx, cfg)
	if err != nil {
		return nil, err
	}
	if ref.Algorithm != 0 && ref.Algorithm != s.alg {
		s.Close()
		return nil, fmt.Errorf("openpgpcard: the %v key is %v, not %v: %w", k, s.attr, ref.Algorithm, signer.ErrUnsupported)
	}
	return s, nil
}

// GenerateKey generates a key in the slot label names (sig, dec or aut;
// empty means sig), replacing the key there: signer.Ed25519 (cv25519 ECDH
// in dec), signer.ECDSAP256 (ECDH P-256 in dec) or signer.RSAPKCS1v15
// (2048 bits). It needs Config.AdminPIN.
func (st *Store) GenerateKey(ctx context.Context, alg signer.Algorithm, label string) (signer.KeyInfo, error) {
	if err := st.check(ctx); err != nil {
		return signer.KeyInfo{}, err
	}
	k := KeySign
	if label != "" {
		var ok bool
		if k, ok = parseKey(label); !ok {
			return signer.KeyInfo{}, fmt.Errorf("openpgpcard: label %q: the card's slots are sig, dec and aut: %w", truncate(label), signer.ErrInvalidArgument)
		}
	}
	a, err := attributesFor(alg, k)
	if err != nil {
		return signer.KeyInfo{}, err
	}
	pub, err := Generate(ctx, st.cfg, k, a)
	if err != nil {
		return signer.KeyInfo{}, err
	}
	if k == KeyDecrypt {
		alg = 0
	}
	return signer.KeyInfo{Label: k.String(), Algorithm: alg, Public: pub}, nil
}

func attributesFor(alg signer.Algorithm, k Key) (Attributes, error) {
	switch {
	case alg == signer.Ed25519 && k == KeyDecrypt:
		return AttrX25519, nil
	case alg == signer.Ed25519:
		return AttrEd25519, nil
	case alg == signer.ECDSAP256 && k == KeyDecrypt:
		return AttrECDHP256, nil
	case alg == signer.ECDSAP256:
		return AttrECDSAP256, nil
	case alg == signer.RSAPKCS1v15:
		return AttrRSA2048, nil
	}
	return Attributes{}, fmt.Errorf("openpgpcard: %v keys: the card holds Ed25519, ECDSA P-256 and RSA PKCS #1 v1.5: %w", alg, signer.ErrUnsupported)
}

// Generate sets key k's attributes to a (when they differ) and generates a
// key pair there with GENERATE ASYMMETRIC KEY PAIR, after verifying PW3
// from cfg.AdminPIN. It returns the new public key. A card that does not
// take the attributes refuses with a *StatusError wrapping
// signer.ErrInvalidMessage (6A80).
func Generate(ctx context.Context, cfg Config, k Key, a Attributes) (crypto.PublicKey, error) {
	l, err := adminSlot(ctx, cfg, "generating", k, a)
	if err != nil {
		return nil, err
	}
	defer l.tr.Close()
	resp, err := l.transmit(ctx, "GENERATE ASYMMETRIC KEY PAIR", iso7816.Command{INS: 0x47, P1: 0x80, Data: []byte{crt[k], 0x00}})
	if err != nil {
		return nil, err
	}
	return a.parsePublic(resp)
}

// Close closes the store; Signers it opened stay open. Close is
// idempotent.
func (st *Store) Close() error {
	st.mu.Lock()
	st.closed = true
	st.mu.Unlock()
	return nil
}
