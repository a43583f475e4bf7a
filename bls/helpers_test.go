package bls_test

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"math/big"
	"os"
	"strings"
	"testing"

	"github.com/cloudflare/circl/ecc/bls12381"

	"github.com/signerkit/signerkit/bls"
	"github.com/signerkit/signerkit/signer"
)

var algs = []signer.Algorithm{signer.BLS12381MinPK, signer.BLS12381MinSig}

// The BLS12-381 base field prime p and group order r, written out here.
var (
	fieldP, _ = new(big.Int).SetString("1a0111ea397fe69a4b1ba7b6434bacd764774b84f38512bf6730d2a0f6b0f6241eabfffeb153ffffb9feffffffffaaab", 16)
	orderR, _ = new(big.Int).SetString("73eda753299d7d483339d80809a1d80553bda402fffe5bfeffffffff00000001", 16)
)

// circlSign signs msg with the scalar sk (32 bytes, big-endian) and dst
// using circl's arithmetic alone: H(msg)·sk, compressed.
func circlSign(alg signer.Algorithm, sk, msg, dst []byte) []byte {
	var s bls12381.Scalar
	s.SetBytes(sk)
	if alg == signer.BLS12381MinPK {
		var q bls12381.G2
		q.Hash(msg, dst)
		q.ScalarMult(&s, &q)
		return q.BytesCompressed()
	}
	var q bls12381.G1
	q.Hash(msg, dst)
	q.ScalarMult(&s, &q)
	return q.BytesCompressed()
}

// circlPublic returns the serialized public key of sk, computed by circl.
func circlPublic(alg signer.Algorithm, sk []byte) []byte {
	var s bls12381.Scalar
	s.SetBytes(sk)
	if alg == signer.BLS12381MinPK {
		var p bls12381.G1
		p.ScalarMult(&s, bls12381.G1Generator())
		return p.Bytes()
	}
	var p bls12381.G2
	p.ScalarMult(&s, bls12381.G2Generator())
	return p.Bytes()
}

func mustHex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatalf("hex %q: %v", s, err)
	}
	return b
}

// readVectors returns the space-separated hex fields of each line of a
// testdata file, skipping comments.
func readVectors(t *testing.T, name string) [][][]byte {
	t.Helper()
	data, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	var out [][][]byte
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		var fields [][]byte
		for _, f := range strings.Fields(line) {
			fields = append(fields, mustHex(t, f))
		}
		out = append(out, fields)
	}
	if len(out) == 0 {
		t.Fatalf("no vectors in %s", name)
	}
	return out
}

func mustSeed(t testing.TB, alg signer.Algorithm, label string) *bls.Signer {
	t.Helper()
	ikm := bytes.Repeat([]byte(label), 1+32/len(label))
	s, err := bls.FromSeed(ikm, alg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func fp(x *big.Int) []byte { return x.FillBytes(make([]byte, 48)) }

// isSquare reports whether a is a square in Fp (Euler's criterion).
func isSquare(a *big.Int) bool {
	e := new(big.Int).Rsh(new(big.Int).Sub(fieldP, big.NewInt(1)), 1)
	v := new(big.Int).Exp(a, e, fieldP)
	return v.Sign() == 0 || v.Cmp(big.NewInt(1)) == 0
}

// offSubgroupG1 returns the compressed and serialized forms of a point of
// E(Fp): y² = x³ + 4 that is not in the prime-order subgroup (the cofactor
// is large, so the first x whose right side is a square gives one; the
// test checks it with both libraries).
func offSubgroupG1(t *testing.T) (compressed, serialized []byte) {
	for x := big.NewInt(1); ; x.Add(x, big.NewInt(1)) {
		rhs := new(big.Int).Exp(x, big.NewInt(3), fieldP)
		rhs.Add(rhs, big.NewInt(4)).Mod(rhs, fieldP)
		if !isSquare(rhs) {
			continue
		}
		// p ≡ 3 (mod 4): y = rhs^((p+1)/4)
		y := new(big.Int).Exp(rhs, new(big.Int).Rsh(new(big.Int).Add(fieldP, big.NewInt(1)), 2), fieldP)
		c := fp(x)
		c[0] |= 0x80
		return c, append(fp(x), fp(y)...)
	}
}

// offSubgroupG2Compressed returns the compressed form of a point of the
// twist E'(Fp²): y² = x³ + 4(1+i) outside the prime-order subgroup. An
// element of Fp² is a square when its norm is a square in Fp; either root
// will do, as both points are outside the subgroup.
func offSubgroupG2Compressed(t *testing.T) []byte {
	one := big.NewInt(1)
	for x0 := big.NewInt(1); ; x0.Add(x0, one) {
		// x = x0 + i: x³ = (x0³ − 3x0) + (3x0² − 1)i
		re := new(big.Int).Exp(x0, big.NewInt(3), fieldP)
		re.Sub(re, new(big.Int).Mul(big.NewInt(3), x0))
		im := new(big.Int).Mul(x0, x0)
		im.Mul(im, big.NewInt(3)).Sub(im, one)
		re.Add(re, big.NewInt(4)).Mod(re, fieldP)
		im.Add(im, big.NewInt(4)).Mod(im, fieldP)
		norm := new(big.Int).Mul(re, re)
		norm.Add(norm, new(big.Int).Mul(im, im)).Mod(norm, fieldP)
		if !isSquare(norm) {
			continue
		}
		out := append(fp(one), fp(x0)...) // c1 ‖ c0
		out[0] |= 0x80
		return out
	}
}

// circlSumKeys adds public keys with circl and returns the serialized sum.
func circlSumKeys(t *testing.T, alg signer.Algorithm, keys []*bls.PublicKey) []byte {
	t.Helper()
	if alg == signer.BLS12381MinPK {
		var sum bls12381.G1
		sum.SetIdentity()
		for _, k := range keys {
			var p bls12381.G1
			if err := p.SetBytes(k.Bytes()); err != nil {
				t.Fatal(err)
			}
			sum.Add(&sum, &p)
		}
		return sum.Bytes()
	}
	var sum bls12381.G2
	sum.SetIdentity()
	for _, k := range keys {
		var p bls12381.G2
		if err := p.SetBytes(k.Bytes()); err != nil {
			t.Fatal(err)
		}
		sum.Add(&sum, &p)
	}
	return sum.Bytes()
}
