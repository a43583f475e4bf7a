package keybase

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/sha256"
	"fmt"

	"github.com/decred/dcrd/dcrec/secp256k1/v4"
	//lint:ignore SA1019 RIPEMD-160 is tm2's secp256k1 address hash, as gno computes it
	"golang.org/x/crypto/ripemd160"

	"github.com/signerkit/signerkit/internal/bech32"
	"github.com/signerkit/signerkit/internal/eckey"
	"github.com/signerkit/signerkit/signer"
)

// AddressPrefix is the bech32 human-readable part of gno.land addresses,
// tm2's default (crypto.Bech32AddrPrefix).
const AddressPrefix = "g"

// addressSize is the size of a tm2 address (crypto.AddressSize).
const addressSize = 20

// Address returns the gno.land address of a public key, "g1…", as gnokey
// shows it (tm2/pkg/crypto, v1.7.1): the bech32 encoding, under prefix
// "g", of 20 bytes: for Ed25519, the first 20 bytes of the key's SHA-256;
// for secp256k1, RIPEMD-160 of SHA-256 of the 33-byte compressed key.
// pub is an ed25519.PublicKey, or a secp256k1 key as an *ecdsa.PublicKey
// (as the keys of this package are) or a decred *secp256k1.PublicKey;
// any other key fails with an error wrapping signer.ErrUnsupported, and a
// point not on secp256k1 with one wrapping signer.ErrInvalidKey.
//
// signer.KeyInfo carries no address: Address(info.Public) is the key's.
func Address(pub crypto.PublicKey) (string, error) {
	raw, err := addressBytes(pub)
	if err != nil {
		return "", err
	}
	return bech32.EncodeBytes(AddressPrefix, raw)
}

func addressBytes(pub crypto.PublicKey) ([]byte, error) {
	switch p := pub.(type) {
	case ed25519.PublicKey:
		if len(p) != ed25519.PublicKeySize {
			return nil, fmt.Errorf("keybase: Ed25519 public key of %d bytes: %w", len(p), signer.ErrInvalidKey)
		}
		sum := sha256.Sum256(p)
		return sum[:addressSize], nil
	case *ecdsa.PublicKey:
		px, py := eckey.Coordinates(p)
		if p == nil || px == nil || py == nil {
			return nil, fmt.Errorf("keybase: nil secp256k1 public key: %w", signer.ErrInvalidKey)
		}
		if px.BitLen() > 256 || py.BitLen() > 256 {
			return nil, fmt.Errorf("keybase: public key not on secp256k1: %w", signer.ErrInvalidKey)
		}
		var x, y secp256k1.FieldVal
		xOver := x.SetByteSlice(px.FillBytes(make([]byte, 32)))
		yOver := y.SetByteSlice(py.FillBytes(make([]byte, 32)))
		k := secp256k1.NewPublicKey(&x, &y)
		if xOver || yOver || px.Sign() < 0 || py.Sign() < 0 || !k.IsOnCurve() {
			return nil, fmt.Errorf("keybase: public key not on secp256k1: %w", signer.ErrInvalidKey)
		}
		return secp256k1Address(k), nil
	case *secp256k1.PublicKey:
		if p == nil || !p.IsOnCurve() {
			return nil, fmt.Errorf("keybase: public key not on secp256k1: %w", signer.ErrInvalidKey)
		}
		return secp256k1Address(p), nil
	}
	return nil, fmt.Errorf("keybase: address of a %T: %w", pub, signer.ErrUnsupported)
}

func secp256k1Address(k *secp256k1.PublicKey) []byte {
	sha := sha256.Sum256(k.SerializeCompressed())
	h := ripemd160.New()
	h.Write(sha[:])
	return h.Sum(nil)
}

// ParseAddress returns the 20 bytes of s when s is a gno.land address
// ("g1…", either case), as tm2's crypto.AddressFromBech32 parses them.
func ParseAddress(s string) ([]byte, bool) {
	hrp, raw, err := bech32.DecodeBytes(s)
	if err != nil || hrp != AddressPrefix || len(raw) != addressSize {
		return nil, false
	}
	return raw, true
}

// resolve returns the name of the key that label selects: when label is
// a gno.land address, the first (by name) key of that address; else, or
// when no key has that address, label itself, as a name. Key files that
// cannot be read are skipped, as ListKeys leaves them out.
func (s *Store) resolve(ctx context.Context, label string) (string, error) {
	want, ok := ParseAddress(label)
	if !ok {
		return label, nil
	}
	keys, _ := s.ListKeys(ctx) // unreadable files are reported when opened by name
	if err := s.check(ctx); err != nil {
		return "", err
	}
	for _, k := range keys {
		got, err := addressBytes(k.Public)
		if err == nil && string(got) == string(want) {
			return k.Label, nil
		}
	}
	return label, nil
}
