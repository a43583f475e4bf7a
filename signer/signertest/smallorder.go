package signertest

import "encoding/hex"

// smallOrderHex lists the Ed25519 public-key encodings of small order: the
// eight points P with [8]P = identity, then every other 32-byte string that
// a decompressing decoder (crypto/ed25519, filippo.io/edwards25519) reads
// as one of them. Under any of these keys one constant signature verifies
// for a good share of all messages (for every message under the identity).
// The tests of package signer recompute the list with edwards25519.
var smallOrderHex = [...]string{
	// The eight points of the 8-torsion subgroup, canonically encoded.
	"0100000000000000000000000000000000000000000000000000000000000000", // identity (0, 1)
	"ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f", // order 2 (0, −1)
	"0000000000000000000000000000000000000000000000000000000000000000", // order 4 (√−1, 0)
	"0000000000000000000000000000000000000000000000000000000000000080", // order 4 (−√−1, 0)
	"26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05", // order 8
	"26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc85", // order 8
	"c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a", // order 8
	"c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac03fa", // order 8
	// Non-canonical encodings of them: the sign bit set on x = 0, and
	// y ≥ p (y + p < 2^255 only for y = 0 and y = 1).
	"0100000000000000000000000000000000000000000000000000000000000080", // identity, x = −0
	"ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff", // order 2, x = −0
	"edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f", // y = p: order 4
	"edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff", // y = p, sign set: order 4
	"eeffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f", // y = p + 1: identity
	"eeffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff", // y = p + 1, x = −0: identity
}

// SmallOrderCanonical is how many of SmallOrderEd25519Keys's keys come
// first as the canonical encodings of the eight small-order points.
const SmallOrderCanonical = 8

// SmallOrderEd25519Keys returns fresh copies of the 14 encodings of
// small-order Ed25519 points: the 8 canonical ones first, then the 6
// non-canonical ones. No seed gives any of them; every place that accepts
// an Ed25519 public key must refuse them all (signer.CheckEd25519PublicKey
// does).
func SmallOrderEd25519Keys() [][]byte {
	keys := make([][]byte, len(smallOrderHex))
	for i, h := range smallOrderHex {
		b, err := hex.DecodeString(h)
		if err != nil || len(b) != 32 {
			panic("signertest: bad small-order key " + h)
		}
		keys[i] = b
	}
	return keys
}
