package yubihsmsim

import (
	"crypto/ed25519"
	"crypto/sha512"
	"errors"
	"slices"

	"filippo.io/edwards25519"
)

// edKey is an Ed25519 key as the device keeps it: the secret scalar, the
// nonce prefix and the public key (RFC 8032 5.1.5), which is also what a
// key exported under wrap carries. A key imported under wrap has no seed,
// so the sim signs from this form rather than with crypto/ed25519.
type edKey struct {
	s        edwards25519.Scalar
	scalarBE [32]byte // the clamped scalar, big-endian, as it is wrapped
	prefix   [32]byte
	pub      [32]byte
}

// edKeyFromSeed expands a 32-byte seed.
func edKeyFromSeed(seed []byte) *edKey {
	h := sha512.Sum512(seed)
	defer clear(h[:])
	k := &edKey{}
	if _, err := k.s.SetBytesWithClamping(h[:32]); err != nil {
		panic(err) // 32 bytes always
	}
	copy(k.scalarBE[:], h[:32])
	k.scalarBE[0] &= 248
	k.scalarBE[31] &= 127
	k.scalarBE[31] |= 64
	slices.Reverse(k.scalarBE[:])
	copy(k.prefix[:], h[32:])
	copy(k.pub[:], new(edwards25519.Point).ScalarBaseMult(&k.s).Bytes())
	return k
}

// wrappedLen is the size of an Ed25519 key's wrapped form.
const edWrappedLen = 96

// wrapped is the key's form under wrap, as Yubico's yubihsm-wrap writes
// one (common/util.c read_private_key with internal_repr): the clamped
// scalar big-endian, the prefix, the public key.
func (k *edKey) wrapped() []byte {
	out := make([]byte, 0, edWrappedLen)
	out = append(out, k.scalarBE[:]...)
	out = append(out, k.prefix[:]...)
	return append(out, k.pub[:]...)
}

var errEdWrapped = errors.New("yubihsmsim: Ed25519 key under wrap: bad length, scalar or public key")

// edKeyFromWrapped parses a wrapped Ed25519 key and checks that its public
// key is its scalar's.
func edKeyFromWrapped(b []byte) (*edKey, error) {
	if len(b) != edWrappedLen {
		return nil, errEdWrapped
	}
	le := slices.Clone(b[:32])
	slices.Reverse(le)
	defer clear(le)
	k := &edKey{}
	var wide [64]byte
	copy(wide[:], le)
	// A clamped scalar is below 2^255, so it may be at or above l: reduce
	// it as SetBytesWithClamping would (without clamping it again).
	if _, err := k.s.SetUniformBytes(wide[:]); err != nil {
		return nil, errEdWrapped
	}
	clear(wide[:])
	copy(k.scalarBE[:], b[:32])
	copy(k.prefix[:], b[32:64])
	copy(k.pub[:], b[64:])
	if [32]byte(new(edwards25519.Point).ScalarBaseMult(&k.s).Bytes()) != k.pub {
		return nil, errEdWrapped
	}
	return k, nil
}

func (k *edKey) public() []byte { return slices.Clone(k.pub[:]) }

// sign is pure Ed25519 (RFC 8032 5.1.6) from the expanded key.
func (k *edKey) sign(msg []byte) []byte {
	h := sha512.New()
	h.Write(k.prefix[:])
	h.Write(msg)
	var d [64]byte
	r, _ := new(edwards25519.Scalar).SetUniformBytes(h.Sum(d[:0]))
	R := new(edwards25519.Point).ScalarBaseMult(r).Bytes()
	h.Reset()
	h.Write(R)
	h.Write(k.pub[:])
	h.Write(msg)
	c, _ := new(edwards25519.Scalar).SetUniformBytes(h.Sum(d[:0]))
	s := new(edwards25519.Scalar).MultiplyAdd(c, &k.s, r)
	return append(R, s.Bytes()...)
}

// seedSize is what keySize reports for an Ed25519 key.
const seedSize = ed25519.SeedSize
