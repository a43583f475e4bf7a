package openpgpcard

import (
	"context"
	"crypto"
	"crypto/ecdh"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"fmt"

	"github.com/signerkit/signerkit/openpgpcard/internal/iso7816"
	"github.com/signerkit/signerkit/signer"
)

// Import puts an existing private key on the card as key k, after
// verifying PW3 from cfg.AdminPIN: it sets the key's attributes when they
// differ, then sends the key with PUT DATA by extended header list (INS
// DB, P1-P2 3FFF; OpenPGP card specification 4.4.3.12 and 7.2.8),
// extended or chained as the card takes long commands. priv is an
// *rsa.PrivateKey of 2048 or 4096 bits (public exponent below 2³²), an
// ed25519.PrivateKey (sig or aut), an *ecdsa.PrivateKey on P-256 (ECDSA
// in sig or aut, ECDH in dec) or an *ecdh.PrivateKey on P-256 (dec).
// Curve25519 ECDH keys are refused with signer.ErrUnsupported. Import
// reads the public key back and returns it once it matches priv's. Like
// Generate, it writes no fingerprint or date: GnuPG's keytocard does.
func Import(ctx context.Context, cfg Config, k Key, priv crypto.PrivateKey) (crypto.PublicKey, error) {
	a, tmpl, err := importTemplate(k, priv)
	if err != nil {
		return nil, err
	}
	l, err := adminSlot(ctx, cfg, "importing", k, a)
	if err != nil {
		return nil, err
	}
	defer l.tr.Close()
	_, err = l.transmit(ctx, "PUT DATA (key import)", iso7816.Command{INS: 0xDB, P1: 0x3F, P2: 0xFF, Data: tmpl})
	clear(tmpl)
	if err != nil {
		return nil, err
	}
	resp, err := l.transmit(ctx, "READ PUBLIC KEY", iso7816.Command{INS: 0x47, P1: 0x81, Data: []byte{crt[k], 0x00}})
	if err != nil {
		return nil, err
	}
	pub, err := a.parsePublic(resp)
	if err != nil {
		return nil, err
	}
	want := priv.(interface{ Public() crypto.PublicKey }).Public()
	if e, ok := want.(interface{ Equal(crypto.PublicKey) bool }); !ok || !e.Equal(pub) && !ecdhEqual(want, pub) {
		return nil, fmt.Errorf("openpgpcard: the card's %v key after import is not the key imported: %w", k, signer.ErrProtocol)
	}
	return pub, nil
}

// ecdhEqual compares an ECDSA P-256 public key with the ECDH key a
// decryption slot reports for it.
func ecdhEqual(want, got crypto.PublicKey) bool {
	w, ok1 := want.(*ecdsa.PublicKey)
	g, ok2 := got.(*ecdh.PublicKey)
	if !ok1 || !ok2 {
		return false
	}
	e, err := w.ECDH()
	return err == nil && e.Equal(g)
}

// adminSlot connects, verifies PW3 from cfg.AdminPIN (for what) and sets
// key k's attributes to a when they differ.
func adminSlot(ctx context.Context, cfg Config, what string, k Key, a Attributes) (*link, error) {
	if cfg.AdminPIN == nil {
		return nil, fmt.Errorf("openpgpcard: %s a key needs Config.AdminPIN (PW3): %w", what, signer.ErrPermissionDenied)
	}
	dial, err := cfg.dialer()
	if err != nil {
		return nil, err
	}
	l, info, err := connect(ctx, dial)
	if err != nil {
		return nil, err
	}
	pin, err := cfg.AdminPIN()
	if err != nil {
		l.tr.Close()
		return nil, fmt.Errorf("openpgpcard: admin PIN: %w", err)
	}
	_, err = l.transmit(ctx, "VERIFY PW3", iso7816.Command{INS: 0x20, P2: 0x83, Data: pin})
	clear(pin)
	if err == nil && info.attrs[k] != a {
		_, err = l.transmit(ctx, "PUT DATA C"+string(rune('1'+k)), iso7816.Command{INS: 0xDA, P2: 0xC1 + byte(k), Data: a.Bytes()})
	}
	if err != nil {
		l.tr.Close()
		return nil, err
	}
	return l, nil
}

// importTemplate returns the attributes priv needs in slot k and the
// extended header list that imports it: 4D { CRT, 7F48 (tags and lengths),
// 5F48 (the values) }.
func importTemplate(k Key, priv crypto.PrivateKey) (Attributes, []byte, error) {
	if k > KeyAuth {
		return Attributes{}, nil, fmt.Errorf("openpgpcard: key %d is not sig, dec or aut: %w", k, signer.ErrInvalidArgument)
	}
	type part struct {
		tag uint16
		v   []byte
	}
	var a Attributes
	var parts []part
	switch p := priv.(type) {
	case *rsa.PrivateKey:
		bits := p.N.BitLen()
		if bits != 2048 && bits != 4096 || len(p.Primes) != 2 || p.E >= 1<<32 {
			return Attributes{}, nil, fmt.Errorf("openpgpcard: importing a %d-bit RSA key of %d primes: the card takes 2048 or 4096 bits, two primes: %w", bits, len(p.Primes), signer.ErrUnsupported)
		}
		a = Attributes{ID: 0x01, RSABits: bits}
		e := []byte{byte(p.E >> 24), byte(p.E >> 16), byte(p.E >> 8), byte(p.E)}
		parts = []part{{0x91, e}, {0x92, p.Primes[0].FillBytes(make([]byte, bits/16))}, {0x93, p.Primes[1].FillBytes(make([]byte, bits/16))}}
	case ed25519.PrivateKey:
		if k == KeyDecrypt || len(p) != ed25519.PrivateKeySize {
			return Attributes{}, nil, fmt.Errorf("openpgpcard: an Ed25519 key does not decipher: %w", signer.ErrUnsupported)
		}
		a, parts = AttrEd25519, []part{{0x92, p.Seed()}}
	case *ecdsa.PrivateKey:
		if p.Curve != elliptic.P256() {
			return Attributes{}, nil, fmt.Errorf("openpgpcard: ECDSA on %s: the card takes P-256: %w", p.Curve.Params().Name, signer.ErrUnsupported)
		}
		d, err := p.Bytes()
		if err != nil {
			return Attributes{}, nil, fmt.Errorf("openpgpcard: %v: %w", err, signer.ErrInvalidArgument)
		}
		a, parts = AttrECDSAP256, []part{{0x92, d}}
		if k == KeyDecrypt {
			a = AttrECDHP256
		}
	case *ecdh.PrivateKey:
		if p.Curve() != ecdh.P256() || k != KeyDecrypt {
			return Attributes{}, nil, fmt.Errorf("openpgpcard: importing an ECDH key other than P-256 into dec: %w", signer.ErrUnsupported)
		}
		a, parts = AttrECDHP256, []part{{0x92, p.Bytes()}}
	default:
		return Attributes{}, nil, fmt.Errorf("openpgpcard: importing a %T: %w", priv, signer.ErrUnsupported)
	}
	var list, values []byte
	for _, p := range parts {
		list = iso7816.AppendHeader(list, p.tag, len(p.v))
		values = append(values, p.v...)
	}
	body := append([]byte{crt[k], 0x00}, iso7816.TLVBytes(0x7F48, list)...)
	body = iso7816.AppendTLV(body, 0x5F48, values)
	clear(values)
	return a, iso7816.TLVBytes(0x4D, body), nil
}
