package yubihsmsim

import (
	"crypto"
	"crypto/rsa"
	"errors"
	"io"
	"math/big"
)

// RSASSA-PSS as the device signs it (RFC 8017 8.1.1 and 9.1.1): the
// standard library's rsa.SignPSS ties MGF1 to the message hash and reads
// a salt length of 0 as "the longest that fits", where the device takes
// MGF1 with any hash and a salt of any length, 0 included. The sim
// encodes the message itself and applies the private key with math/big:
// simulator code, not constant-time, never used for real keys.

// mgf1Hash is the hash of an MGF1 algorithm, 0 for others.
func mgf1Hash(alg byte) crypto.Hash {
	switch alg {
	case AlgMGF1SHA1:
		return crypto.SHA1
	case AlgMGF1SHA256:
		return crypto.SHA256
	case AlgMGF1SHA384:
		return crypto.SHA384
	case AlgMGF1SHA512:
		return crypto.SHA512
	}
	return 0
}

// mgf1 is MGF1 (RFC 8017 B.2.1) with hash h: n bytes.
func mgf1(h crypto.Hash, seed []byte, n int) []byte {
	var out []byte
	for c := uint32(0); len(out) < n; c++ {
		d := h.New()
		d.Write(seed)
		d.Write([]byte{byte(c >> 24), byte(c >> 16), byte(c >> 8), byte(c)})
		out = d.Sum(out)
	}
	return out[:n]
}

var errPSS = errors.New("yubihsmsim: PSS: the key is too short for the hash and salt")

// emsaPSS encodes digest (of hash h) into emBits bits with MGF1 under
// mgfHash and the given salt (RFC 8017 9.1.1).
func emsaPSS(digest []byte, h, mgfHash crypto.Hash, salt []byte, emBits int) ([]byte, error) {
	emLen := (emBits + 7) / 8
	hLen := h.Size()
	if emLen < hLen+len(salt)+2 {
		return nil, errPSS
	}
	m := h.New()
	m.Write(make([]byte, 8))
	m.Write(digest)
	m.Write(salt)
	hash := m.Sum(nil)
	db := make([]byte, emLen-hLen-1)
	db[len(db)-len(salt)-1] = 1
	copy(db[len(db)-len(salt):], salt)
	for i, b := range mgf1(mgfHash, hash, len(db)) {
		db[i] ^= b
	}
	db[0] &= 0xff >> (8*emLen - emBits)
	return append(append(db, hash...), 0xbc), nil
}

// signPSS signs digest with k: the salt drawn from the device's
// randomness, the encoded message raised to the private exponent.
func (d *Device) signPSS(k *rsa.PrivateKey, h, mgfHash crypto.Hash, digest []byte, saltLen int) ([]byte, error) {
	salt := make([]byte, saltLen)
	if _, err := io.ReadFull(d.rand, salt); err != nil {
		return nil, err
	}
	em, err := emsaPSS(digest, h, mgfHash, salt, k.N.BitLen()-1)
	if err != nil {
		return nil, err
	}
	s := new(big.Int).Exp(new(big.Int).SetBytes(em), k.D, k.N)
	return s.FillBytes(make([]byte, k.Size())), nil
}
