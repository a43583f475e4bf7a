// Package secp256k1sign is the secp256k1 key handling that packages
// keybase and inprocess share, on github.com/decred/dcrd/dcrec/secp256k1:
// a private key from its scalar, checked, and the signature forms
// (tm2's and CometBFT's r‖s, and ASN.1 DER for crypto.Signer). Signatures
// are deterministic (RFC 6979) and low-S.
package secp256k1sign

import (
	"github.com/decred/dcrd/dcrec/secp256k1/v4"
	"github.com/decred/dcrd/dcrec/secp256k1/v4/ecdsa"
)

// ScalarSize is the size of a private scalar.
const ScalarSize = 32

// FromScalar returns the private key of d, a big-endian scalar of
// ScalarSize bytes, or false when d is another length or not in [1, n−1].
// The key holds a copy of d; d is not kept.
func FromScalar(d []byte) (*secp256k1.PrivateKey, bool) {
	var s secp256k1.ModNScalar
	defer s.Zero()
	if len(d) != ScalarSize || s.SetByteSlice(d) || s.IsZero() {
		return nil, false
	}
	return secp256k1.NewPrivateKey(&s), true
}

// Sign returns the signature of digest as r‖s, 32 bytes each, as tm2 and
// CometBFT write a secp256k1 signature.
func Sign(k *secp256k1.PrivateKey, digest []byte) []byte {
	sig := make([]byte, 64)
	es := ecdsa.Sign(k, digest)
	r, s := es.R(), es.S()
	r.PutBytesUnchecked(sig[:32])
	s.PutBytesUnchecked(sig[32:])
	return sig
}

// SignASN1 returns the signature of digest in ASN.1 DER, as
// crypto/ecdsa.SignASN1 writes it.
func SignASN1(k *secp256k1.PrivateKey, digest []byte) []byte {
	return ecdsa.Sign(k, digest).Serialize()
}
