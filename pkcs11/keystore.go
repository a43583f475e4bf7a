//go:build cgo

package pkcs11

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"encoding/binary"
	"fmt"
	"math/big"
	"math/bits"

	p11 "github.com/miekg/pkcs11"

	"github.com/signerkit/signerkit/internal/eckey"
	"github.com/signerkit/signerkit/signer"
)

// GenerateKey makes a key pair on the token (the private key is sensitive
// and not extractable) under label, with a random 8-byte CKA_ID. RSA keys
// have 2048 bits; use Generate for others.
func (t *Store) GenerateKey(ctx context.Context, alg signer.Algorithm, label string) (signer.KeyInfo, error) {
	return t.Generate(ctx, KeySpec{Algorithm: alg, Label: label})
}

// Generate makes the key pair spec describes on the token.
func (t *Store) Generate(ctx context.Context, spec KeySpec) (signer.KeyInfo, error) {
	if err := t.checkOpen(); err != nil {
		return signer.KeyInfo{}, err
	}
	bits := spec.RSABits
	if bits == 0 {
		bits = 2048
	}
	if spec.Algorithm.IsRSA() && (bits < 2048 || bits > 4096) {
		return signer.KeyInfo{}, fmt.Errorf("pkcs11: %d-bit RSA key: 2048 to 4096: %w", bits, signer.ErrUnsupported)
	}
	pub, priv, err := t.templates(spec.Algorithm, spec.Label, spec.ID, spec.Exportable)
	if err != nil {
		return signer.KeyInfo{}, err
	}
	var mech uint
	switch {
	case spec.Algorithm == signer.Ed25519:
		mech = ckmECEdwardsKeyPairGen
	case spec.Algorithm.IsECDSA():
		mech = p11.CKM_EC_KEY_PAIR_GEN
	default:
		mech = p11.CKM_RSA_PKCS_KEY_PAIR_GEN
		pub = append(pub,
			p11.NewAttribute(p11.CKA_MODULUS_BITS, uint(bits)),
			p11.NewAttribute(p11.CKA_PUBLIC_EXPONENT, []byte{1, 0, 1}))
	}
	return t.store(ctx, spec.Label, func(sh p11.SessionHandle) (p11.ObjectHandle, error) {
		_, h, err := t.pool.mod.ctx.GenerateKeyPair(sh, []*p11.Mechanism{p11.NewMechanism(mech, nil)}, pub, priv)
		return h, wrap("C_GenerateKeyPair", err)
	}, spec.Algorithm)
}

// ImportKey puts priv (an ed25519.PrivateKey, *ecdsa.PrivateKey on P-256
// or P-384, or *rsa.PrivateKey of 2048 to 4096 bits) on the token as a
// sensitive, non-extractable private key and its public key, under label
// with a random 8-byte CKA_ID. alg says which scheme an RSA key signs with
// when opened without one.
func (t *Store) ImportKey(ctx context.Context, priv crypto.PrivateKey, alg signer.Algorithm, label string) (signer.KeyInfo, error) {
	if err := t.checkOpen(); err != nil {
		return signer.KeyInfo{}, err
	}
	s, ok := priv.(crypto.Signer)
	if !ok {
		return signer.KeyInfo{}, fmt.Errorf("pkcs11: cannot import a %T: %w", priv, signer.ErrUnsupported)
	}
	if err := alg.CheckKey(s.Public()); err != nil {
		return signer.KeyInfo{}, fmt.Errorf("pkcs11: import: %w", err)
	}
	pubT, privT, err := t.templates(alg, label, nil, false)
	if err != nil {
		return signer.KeyInfo{}, err
	}
	switch k := priv.(type) {
	case ed25519.PrivateKey:
		if len(k) != ed25519.PrivateKeySize {
			return signer.KeyInfo{}, fmt.Errorf("pkcs11: Ed25519 private key of %d bytes: %w", len(k), signer.ErrInvalidKey)
		}
		point, _ := marshalECPoint(k.Public())
		pubT = append(pubT, p11.NewAttribute(p11.CKA_EC_POINT, point))
		params, _ := ecParams(alg)
		privT = append(privT, p11.NewAttribute(p11.CKA_EC_PARAMS, params), p11.NewAttribute(p11.CKA_VALUE, k.Seed()))
	case *ecdsa.PrivateKey:
		point, err := marshalECPoint(&k.PublicKey)
		if err != nil {
			return signer.KeyInfo{}, err
		}
		d := make([]byte, (k.Curve.Params().BitSize+7)/8)
		eckey.Scalar(k).FillBytes(d) // not k.Bytes(): that is crypto/ecdsa's cached copy, not ours to wipe
		pubT = append(pubT, p11.NewAttribute(p11.CKA_EC_POINT, point))
		params, _ := ecParams(alg)
		privT = append(privT, p11.NewAttribute(p11.CKA_EC_PARAMS, params), p11.NewAttribute(p11.CKA_VALUE, d))
		defer clear(d)
	case *rsa.PrivateKey:
		if b := k.N.BitLen(); b < 2048 || b > 4096 || len(k.Primes) != 2 {
			return signer.KeyInfo{}, fmt.Errorf("pkcs11: RSA key of %d bits and %d primes: 2048 to 4096 bits, two primes: %w", b, len(k.Primes), signer.ErrUnsupported)
		}
		k.Precompute()
		e := big.NewInt(int64(k.E)).Bytes()
		pubT = append(pubT, p11.NewAttribute(p11.CKA_MODULUS, k.N.Bytes()), p11.NewAttribute(p11.CKA_PUBLIC_EXPONENT, e))
		privT = append(privT,
			p11.NewAttribute(p11.CKA_MODULUS, k.N.Bytes()),
			p11.NewAttribute(p11.CKA_PUBLIC_EXPONENT, e),
			p11.NewAttribute(p11.CKA_PRIVATE_EXPONENT, k.D.Bytes()),
			p11.NewAttribute(p11.CKA_PRIME_1, k.Primes[0].Bytes()),
			p11.NewAttribute(p11.CKA_PRIME_2, k.Primes[1].Bytes()),
			p11.NewAttribute(p11.CKA_EXPONENT_1, k.Precomputed.Dp.Bytes()),
			p11.NewAttribute(p11.CKA_EXPONENT_2, k.Precomputed.Dq.Bytes()),
			p11.NewAttribute(p11.CKA_COEFFICIENT, k.Precomputed.Qinv.Bytes()))
	default:
		return signer.KeyInfo{}, fmt.Errorf("pkcs11: cannot import a %T: %w", priv, signer.ErrUnsupported)
	}
	defer func() {
		for _, a := range privT { // the private parts miekg/pkcs11 copied from
			if a.Type != p11.CKA_LABEL && a.Type != p11.CKA_ID {
				clear(a.Value)
			}
		}
	}()
	return t.store(ctx, label, func(sh p11.SessionHandle) (p11.ObjectHandle, error) {
		ph, err := t.pool.mod.ctx.CreateObject(sh, pubT)
		if err != nil {
			return 0, wrap("C_CreateObject", err)
		}
		h, err := t.pool.mod.ctx.CreateObject(sh, privT)
		if err != nil {
			t.pool.mod.ctx.DestroyObject(sh, ph) // leave nothing half made
			return 0, wrap("C_CreateObject", err)
		}
		return h, nil
	}, alg)
}

// templates returns the attributes common to a new key pair of alg. The
// private key is sensitive; it is extractable (under wrap only, being
// sensitive) when exportable is set.
func (t *Store) templates(alg signer.Algorithm, label string, id []byte, exportable bool) (pub, priv []*p11.Attribute, err error) {
	if label == "" {
		return nil, nil, fmt.Errorf("pkcs11: a new key needs a label: %w", signer.ErrInvalidArgument)
	}
	if id == nil {
		id = make([]byte, 8)
		rand.Read(id)
	}
	var keyType uint
	var params []byte
	switch {
	case alg == signer.Ed25519:
		keyType = ckkECEdwards
	case alg == signer.ECDSAP256, alg == signer.ECDSAP384:
		keyType = p11.CKK_EC
	case alg.IsRSA():
		keyType = p11.CKK_RSA
	default:
		return nil, nil, fmt.Errorf("pkcs11: %v keys: %w", alg, signer.ErrUnsupported)
	}
	common := func(class uint) []*p11.Attribute {
		return []*p11.Attribute{
			p11.NewAttribute(p11.CKA_CLASS, class),
			p11.NewAttribute(p11.CKA_KEY_TYPE, keyType),
			p11.NewAttribute(p11.CKA_TOKEN, true),
			p11.NewAttribute(p11.CKA_LABEL, label),
			p11.NewAttribute(p11.CKA_ID, id),
		}
	}
	pub = append(common(p11.CKO_PUBLIC_KEY), p11.NewAttribute(p11.CKA_VERIFY, true))
	priv = append(common(p11.CKO_PRIVATE_KEY),
		p11.NewAttribute(p11.CKA_PRIVATE, true),
		p11.NewAttribute(p11.CKA_SENSITIVE, true),
		p11.NewAttribute(p11.CKA_EXTRACTABLE, exportable),
		p11.NewAttribute(p11.CKA_SIGN, true))
	if keyType != p11.CKK_RSA {
		if params, err = ecParams(alg); err != nil {
			return nil, nil, err
		}
		// On the public template only: key generation derives the private
		// key's (SoftHSM2 refuses it there as read-only); ImportKey adds it.
		pub = append(pub, p11.NewAttribute(p11.CKA_EC_PARAMS, params))
	}
	if alg == signer.RSAPSS {
		// The stored key names no scheme; the public key object carries
		// the one it was made for (see pssHint). The private key signs
		// with either.
		pub = append(pub, p11.NewAttribute(p11.CKA_ALLOWED_MECHANISMS, ulongs(p11.CKM_RSA_PKCS_PSS)))
	}
	return pub, priv, nil
}

// ulongs encodes a CK_ULONG array attribute in host byte order (CK_ULONG
// is as wide as Go's uint on the platforms miekg/pkcs11 supports).
func ulongs(vs ...uint) []byte {
	b := make([]byte, 0, bits.UintSize/8*len(vs))
	for _, v := range vs {
		if bits.UintSize == 32 {
			b = binary.NativeEndian.AppendUint32(b, uint32(v))
		} else {
			b = binary.NativeEndian.AppendUint64(b, uint64(v))
		}
	}
	return b
}

// store runs create, which makes a key pair under label and returns its
// private key, after checking that label is free, and reads the key back.
func (t *Store) store(ctx context.Context, label string, create func(p11.SessionHandle) (p11.ObjectHandle, error), alg signer.Algorithm) (signer.KeyInfo, error) {
	var ko *keyObject
	err := t.pool.do(ctx, &opStats{}, func(sh p11.SessionHandle) error {
		taken, err := findObjects(t.pool.mod.ctx, sh, []*p11.Attribute{p11.NewAttribute(p11.CKA_LABEL, label)})
		if err != nil {
			return err
		}
		if len(taken) > 0 {
			return fmt.Errorf("pkcs11: token %q already has a key labelled %q: %w", t.label, label, signer.ErrKeyExists)
		}
		h, err := create(sh)
		if err != nil {
			return err
		}
		if ko, err = loadKey(t.pool.mod.ctx, sh, h); err != nil {
			return err
		}
		return nil
	})
	if err != nil {
		return signer.KeyInfo{}, err
	}
	info := ko.info()
	info.Algorithm = alg
	return info, nil
}

// DeleteKey destroys the private key ref names and its public key
// objects (those with its key type and CKA_ID, or its label when it has no
// ID).
func (t *Store) DeleteKey(ctx context.Context, ref signer.KeyRef) error {
	if err := t.checkOpen(); err != nil {
		return err
	}
	ref.Algorithm = 0
	ko, err := t.findKey(ctx, ref, &opStats{})
	if err != nil {
		return err
	}
	return t.pool.do(ctx, &opStats{}, func(sh p11.SessionHandle) error {
		pubs, err := findObjects(t.pool.mod.ctx, sh, publicTemplate(ko))
		if err != nil {
			return err
		}
		if err := t.pool.mod.ctx.DestroyObject(sh, ko.handle); err != nil {
			return wrap("C_DestroyObject", err)
		}
		for _, h := range pubs {
			t.pool.mod.ctx.DestroyObject(sh, h)
		}
		return nil
	})
}

// pssHint reports whether k's public key object allows only RSA-PSS, as
// templates marks keys made for signer.RSAPSS.
func pssHint(ctx *p11.Ctx, sh p11.SessionHandle, k *keyObject) bool {
	hs, err := findObjects(ctx, sh, publicTemplate(k))
	if err != nil || len(hs) == 0 {
		return false
	}
	v, err := attr(ctx, sh, hs[0], p11.CKA_ALLOWED_MECHANISMS)
	w := bits.UintSize / 8
	if err != nil || len(v) == 0 || len(v)%w != 0 {
		return false
	}
	pss := false
	for i := 0; i < len(v); i += w {
		m, _ := ulong(v[i : i+w])
		switch m {
		case p11.CKM_RSA_PKCS_PSS:
			pss = true
		case p11.CKM_RSA_PKCS:
			return false
		}
	}
	return pss
}
