package refsecp256k1

import (
	"bytes"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/json"
	"math/big"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/decred/dcrd/dcrec/secp256k1/v4"
	"github.com/decred/dcrd/dcrec/secp256k1/v4/ecdsa"
)

// ---------------------------------------------------------------------------
// Helpers.

func hexInt(t testing.TB, s string) *big.Int {
	t.Helper()
	v, ok := new(big.Int).SetString(s, 16)
	if !ok {
		t.Fatalf("bad hex integer %q", s)
	}
	return v
}

// be32 returns v as a 32-byte big-endian slice.
func be32(v *big.Int) []byte { return v.FillBytes(make([]byte, 32)) }

// compress / uncompress serialize a point with the ref package's math only,
// so the comparison against decred is not circular.
func compress(x, y *big.Int) []byte {
	out := make([]byte, 33)
	out[0] = 0x02 | byte(y.Bit(0))
	x.FillBytes(out[1:])
	return out
}

func uncompress(x, y *big.Int) []byte {
	out := make([]byte, 65)
	out[0] = 0x04
	x.FillBytes(out[1:33])
	y.FillBytes(out[33:])
	return out
}

// newRand returns a deterministic generator so failures are reproducible.
func newRand(t testing.TB) *rand.Rand {
	t.Helper()
	var seed [32]byte
	copy(seed[:], "signerkit/refsecp256k1 test seed")
	return rand.New(rand.NewChaCha8(seed))
}

// randPriv returns a random decred private key together with the same scalar
// as a *big.Int.
func randPriv(t testing.TB, rng *rand.Rand) (*secp256k1.PrivateKey, *big.Int) {
	t.Helper()
	for {
		priv := secp256k1.PrivKeyFromBytes(randBytes(rng, 32)) // reduces mod N
		d := new(big.Int).SetBytes(priv.Serialize())
		if d.Sign() != 0 {
			return priv, d
		}
	}
}

func randBytes(rng *rand.Rand, size int) []byte {
	buf := make([]byte, size)
	for i := range buf {
		buf[i] = byte(rng.Uint32())
	}
	return buf
}

// decredPub returns the public key of priv as big.Ints, via decred.
func decredPub(priv *secp256k1.PrivateKey) (x, y *big.Int) {
	u := priv.PubKey().SerializeUncompressed()
	return new(big.Int).SetBytes(u[1:33]), new(big.Int).SetBytes(u[33:])
}

// ---------------------------------------------------------------------------
// Curve sanity.

func TestCurveConstants(t *testing.T) {
	t.Parallel()
	if !IsOnCurve(Gx(), Gy()) {
		t.Fatal("G is not on the curve")
	}
	if !P().ProbablyPrime(32) || !N().ProbablyPrime(32) {
		t.Fatal("p or n is not prime")
	}
	// p ≡ 3 (mod 4) is what makes the (p+1)/4 square root valid.
	if new(big.Int).Mod(P(), big.NewInt(4)).Int64() != 3 {
		t.Fatal("p is not 3 mod 4")
	}
	if B().Int64() != 7 {
		t.Fatal("b != 7")
	}
	// Accessors must return copies.
	P().SetInt64(0)
	N().SetInt64(0)
	if p.Sign() == 0 || n.Sign() == 0 {
		t.Fatal("accessors leak internal state")
	}
}

func TestGeneratorOrder(t *testing.T) {
	t.Parallel()
	// n·G (unreduced scalar) is the point at infinity.
	if q := scalarMult(N(), generator()); !q.isInfinity() {
		t.Fatal("n·G is not the point at infinity")
	}
	// (n−1)·G = −G = (Gx, p − Gy).
	x, y := PublicKey(new(big.Int).Sub(N(), big.NewInt(1)))
	if x.Cmp(Gx()) != 0 || y.Cmp(new(big.Int).Sub(P(), Gy())) != 0 {
		t.Fatalf("(n-1)·G != -G: got (%x, %x)", x, y)
	}
	// (n+1)·G = G with an unreduced scalar, and PublicKey(n) is infinity.
	gx2, gy2 := scalarMult(new(big.Int).Add(N(), big.NewInt(1)), generator()).toAffine()
	if gx2.Cmp(Gx()) != 0 || gy2.Cmp(Gy()) != 0 {
		t.Fatal("(n+1)·G != G")
	}
	if x, y := PublicKey(N()); x != nil || y != nil {
		t.Fatal("PublicKey(n) is not the point at infinity")
	}
	// 1·G, and a doubling check 2·G computed as G+G and by PublicKey.
	x1, y1 := PublicKey(big.NewInt(1))
	if x1.Cmp(Gx()) != 0 || y1.Cmp(Gy()) != 0 {
		t.Fatal("1·G != G")
	}
	var f fieldCtx
	ax, ay := f.addPoints(generator(), generator()).toAffine()
	dx, dy := PublicKey(big.NewInt(2))
	if ax.Cmp(dx) != 0 || ay.Cmp(dy) != 0 || !IsOnCurve(dx, dy) {
		t.Fatal("G+G != 2·G")
	}
	// G + (−G) = ∞.
	neg := fromAffine(Gx(), new(big.Int).Sub(P(), Gy()))
	if !f.addPoints(generator(), neg).isInfinity() {
		t.Fatal("G + (-G) is not infinity")
	}
}

func TestPublicKeyMatchesDecred(t *testing.T) {
	t.Parallel()
	rng := newRand(t)
	for i := 0; i < 50; i++ {
		priv, d := randPriv(t, rng)
		x, y := PublicKey(d)
		wx, wy := decredPub(priv)
		if x.Cmp(wx) != 0 || y.Cmp(wy) != 0 {
			t.Fatalf("d=%x: ref pub (%x,%x) != decred (%x,%x)", d, x, y, wx, wy)
		}
	}
}

// ---------------------------------------------------------------------------
// Known-answer tests.

type katFile struct {
	Description string `json:"description"`
	Vectors     []struct {
		Source  string `json:"source"`
		D       string `json:"d"`
		Message string `json:"message"`
		K       string `json:"k,omitempty"`
		R       string `json:"r"`
		S       string `json:"s"`
		LowS    bool   `json:"low_s"`
	} `json:"vectors"`
}

func TestRFC6979KnownAnswers(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile(filepath.Join("testdata", "rfc6979_secp256k1.json"))
	if err != nil {
		t.Fatal(err)
	}
	var f katFile
	if err := json.Unmarshal(raw, &f); err != nil {
		t.Fatal(err)
	}
	if len(f.Vectors) < 4 {
		t.Fatalf("only %d vectors", len(f.Vectors))
	}
	var sawHigh bool
	for i, v := range f.Vectors {
		if v.Source == "" {
			t.Fatalf("vector %d has no source", i)
		}
		d, r, s := hexInt(t, v.D), hexInt(t, v.R), hexInt(t, v.S)
		hash := sha256.Sum256([]byte(v.Message))
		if IsLowS(s) != v.LowS {
			t.Errorf("vector %d: low_s field %v disagrees with s", i, v.LowS)
		}

		// (a) The independent reference verifier accepts the published
		// signature, whichever S form it was published in.
		x, y := PublicKey(d)
		if !Verify(x, y, hash[:], r, s) {
			t.Errorf("vector %d (%s): ref Verify rejects published signature", i, v.Message)
		}

		// (b) decred reproduces it byte for byte. decred always emits low S,
		// so a vector published with a high S (e.g. the LedgerHQ/speculos ones,
		// made with CX_NO_CANONICAL) is compared after s -> N - s.
		wantS := new(big.Int).Set(s)
		if !IsLowS(wantS) {
			sawHigh = true
			wantS.Sub(N(), wantS)
		}
		want := append(be32(r), be32(wantS)...)
		priv := secp256k1.PrivKeyFromBytes(be32(d))
		got := ecdsa.SignCompact(priv, hash[:], true)
		if !bytes.Equal(got[1:65], want) {
			t.Errorf("vector %d (%s): decred r||s\n got %x\nwant %x", i, v.Message, got[1:65], want)
		}

		// (c) Where the nonce k is published, the reference signer with that k
		// yields the same r and the same s up to sign (ref Sign does not
		// normalize).
		if v.K != "" {
			gr, gs := Sign(d, hexInt(t, v.K), hash[:])
			if gr.Cmp(r) != 0 {
				t.Errorf("vector %d: ref Sign r = %x, want %x", i, gr, r)
			}
			if gs.Cmp(s) != 0 && gs.Cmp(new(big.Int).Sub(N(), s)) != 0 {
				t.Errorf("vector %d: ref Sign s = %x, want %x or N-s", i, gs, s)
			}
		}
	}
	if !sawHigh {
		t.Error("expected at least one high-S vector in the data set")
	}
}

// ---------------------------------------------------------------------------
// Randomized cross-checks against decred.

func TestDecredSignaturesVerify(t *testing.T) {
	t.Parallel()
	rng := newRand(t)
	const iterations = 200
	for i := 0; i < iterations; i++ {
		priv, d := randPriv(t, rng)
		x, y := PublicKey(d)
		msg := randBytes(rng, rng.IntN(100))
		hash := sha256.Sum256(msg)

		sig := ecdsa.SignCompact(priv, hash[:], true)
		r := new(big.Int).SetBytes(sig[1:33])
		s := new(big.Int).SetBytes(sig[33:65])
		if !Verify(x, y, hash[:], r, s) {
			t.Fatalf("iteration %d: ref rejects decred signature %x", i, sig)
		}
		if !IsLowS(s) {
			t.Fatalf("iteration %d: decred produced high S", i)
		}
		// Further checks on every fourth iteration, to keep the test fast
		// (each reference Verify costs milliseconds, more under -race).
		if i%4 != 0 {
			continue
		}
		// Textbook ECDSA accepts the high-S twin too.
		if !Verify(x, y, hash[:], r, new(big.Int).Sub(N(), s)) {
			t.Fatalf("iteration %d: ref rejects high-S twin", i)
		}
		// One flipped bit anywhere in r||s.
		bad := append([]byte(nil), sig[1:65]...)
		bit := rng.IntN(len(bad) * 8)
		bad[bit/8] ^= 1 << (bit % 8)
		if Verify(x, y, hash[:], new(big.Int).SetBytes(bad[:32]), new(big.Int).SetBytes(bad[32:])) {
			t.Fatalf("iteration %d: bit-flipped signature (bit %d) accepted", i, bit)
		}
		// Wrong message.
		other := sha256.Sum256(append(msg, 0))
		if Verify(x, y, other[:], r, s) {
			t.Fatalf("iteration %d: signature accepted for wrong message", i)
		}
		// Wrong key.
		_, d2 := randPriv(t, rng)
		x2, y2 := PublicKey(d2)
		if Verify(x2, y2, hash[:], r, s) {
			t.Fatalf("iteration %d: signature accepted for wrong key", i)
		}
	}
}

func TestVerifyRejectsOutOfRange(t *testing.T) {
	t.Parallel()
	rng := newRand(t)
	priv, d := randPriv(t, rng)
	x, y := PublicKey(d)
	hash := sha256.Sum256([]byte("range"))
	sig := ecdsa.SignCompact(priv, hash[:], true)
	r := new(big.Int).SetBytes(sig[1:33])
	s := new(big.Int).SetBytes(sig[33:65])
	if !Verify(x, y, hash[:], r, s) {
		t.Fatal("baseline signature rejected")
	}
	zero := new(big.Int)
	cases := []struct {
		name string
		r, s *big.Int
	}{
		{"r=0", zero, s},
		{"s=0", r, zero},
		{"s=N", r, N()},
		{"r=N", N(), s},
		{"r=r+N", new(big.Int).Add(r, N()), s},
		{"s=s+N", r, new(big.Int).Add(s, N())},
		{"r<0", new(big.Int).Neg(r), s},
		{"s<0", r, new(big.Int).Neg(s)},
		{"r=nil", nil, s},
		{"s=nil", r, nil},
	}
	for _, c := range cases {
		if Verify(x, y, hash[:], c.r, c.s) {
			t.Errorf("%s accepted", c.name)
		}
	}
	// Bad public keys.
	if Verify(nil, nil, hash[:], r, s) {
		t.Error("nil public key accepted")
	}
	if Verify(x, new(big.Int).Add(y, big.NewInt(1)), hash[:], r, s) {
		t.Error("off-curve public key accepted")
	}
	if Verify(x, new(big.Int).Add(y, P()), hash[:], r, s) {
		t.Error("public key with y >= p accepted")
	}
}

// TestRefSignVerifiesWithDecred runs the other direction: signatures made by
// the reference signer (random nonce, raw S, various digest lengths) verify
// with decred, which also exercises the leftmost-bits hash truncation.
func TestRefSignVerifiesWithDecred(t *testing.T) {
	t.Parallel()
	rng := newRand(t)
	for i := 0; i < 40; i++ {
		priv, d := randPriv(t, rng)
		_, k := randPriv(t, rng)
		msg := randBytes(rng, 16)
		var hash []byte
		switch i % 4 {
		case 0:
			h := sha256.Sum256(msg)
			hash = h[:]
		case 1:
			h := sha512.Sum512(msg) // longer than n: leftmost 256 bits used
			hash = h[:]
		case 2:
			h := sha512.Sum384(msg)
			hash = h[:]
		case 3:
			hash = msg // shorter than n
		}
		r, s := Sign(d, k, hash)
		if r.Sign() == 0 || s.Sign() == 0 {
			t.Fatalf("iteration %d: degenerate signature", i)
		}
		x, y := PublicKey(d)
		if !Verify(x, y, hash, r, s) {
			t.Fatalf("iteration %d: ref rejects its own signature", i)
		}
		var rs, ss secp256k1.ModNScalar
		rs.SetByteSlice(be32(r))
		ss.SetByteSlice(be32(s))
		if !ecdsa.NewSignature(&rs, &ss).Verify(hash, priv.PubKey()) {
			t.Fatalf("iteration %d (hash len %d): decred rejects ref signature", i, len(hash))
		}
		// The truncation rule: for a 64-byte digest only the first 32 bytes
		// count, so the signature also verifies over that prefix.
		if len(hash) > 32 && !Verify(x, y, hash[:32], r, s) {
			t.Fatalf("iteration %d: truncation rule not applied", i)
		}
	}
}

func TestSignDegenerateNonce(t *testing.T) {
	t.Parallel()
	hash := sha256.Sum256([]byte("k"))
	for _, k := range []*big.Int{new(big.Int), N()} {
		r, s := Sign(big.NewInt(1), k, hash[:])
		if r.Sign() != 0 || s.Sign() != 0 {
			t.Errorf("k=%x: expected zero signature, got (%x, %x)", k, r, s)
		}
	}
}

func TestIsLowS(t *testing.T) {
	t.Parallel()
	half := new(big.Int).Rsh(N(), 1)
	cases := []struct {
		s    *big.Int
		want bool
	}{
		{big.NewInt(1), true},
		{half, true},
		{new(big.Int).Add(half, big.NewInt(1)), false},
		{new(big.Int).Sub(N(), big.NewInt(1)), false},
		{nil, false},
		{big.NewInt(-1), false},
	}
	for _, c := range cases {
		if got := IsLowS(c.s); got != c.want {
			t.Errorf("IsLowS(%v) = %v, want %v", c.s, got, c.want)
		}
	}
}

// ---------------------------------------------------------------------------
// Public key parsing.

func TestParsePublicKeyMatchesDecred(t *testing.T) {
	t.Parallel()
	rng := newRand(t)
	for i := 0; i < 50; i++ {
		priv, _ := randPriv(t, rng)
		wx, wy := decredPub(priv)
		for _, enc := range [][]byte{priv.PubKey().SerializeCompressed(), priv.PubKey().SerializeUncompressed()} {
			x, y, err := ParsePublicKey(enc)
			if err != nil {
				t.Fatalf("ParsePublicKey(%x): %v", enc, err)
			}
			if x.Cmp(wx) != 0 || y.Cmp(wy) != 0 {
				t.Fatalf("ParsePublicKey(%x) = (%x,%x), want (%x,%x)", enc, x, y, wx, wy)
			}
		}
		// Our own serializations round-trip to the same bytes decred emits.
		if !bytes.Equal(compress(wx, wy), priv.PubKey().SerializeCompressed()) ||
			!bytes.Equal(uncompress(wx, wy), priv.PubKey().SerializeUncompressed()) {
			t.Fatal("serialization mismatch")
		}
	}
}

func TestParsePublicKeyRejects(t *testing.T) {
	t.Parallel()
	gComp := compress(Gx(), Gy())
	gUncomp := uncompress(Gx(), Gy())
	if _, _, err := ParsePublicKey(gComp); err != nil {
		t.Fatalf("G compressed: %v", err)
	}
	if _, _, err := ParsePublicKey(gUncomp); err != nil {
		t.Fatalf("G uncompressed: %v", err)
	}

	mod := func(b []byte, f func([]byte)) []byte {
		c := append([]byte(nil), b...)
		f(c)
		return c
	}
	// The smallest x for which x³+7 is a quadratic non-residue mod p: no
	// curve point has this x, so its compressed encoding must be rejected.
	var nonResidue []byte
	for xi := int64(1); ; xi++ {
		xv := big.NewInt(xi)
		rhs := new(big.Int).Exp(xv, big.NewInt(3), P())
		rhs.Add(rhs, B())
		if big.Jacobi(rhs, P()) == -1 {
			nonResidue = compress(xv, big.NewInt(0))
			break
		}
	}
	pBytes := be32(P())

	cases := []struct {
		name string
		in   []byte
		want error
	}{
		{"empty", nil, errPubKeyLength},
		{"32 bytes", gComp[1:], errPubKeyLength},
		{"34 bytes", append(append([]byte(nil), gComp...), 0), errPubKeyLength},
		{"64 bytes", gUncomp[1:], errPubKeyLength},
		{"66 bytes", append(append([]byte(nil), gUncomp...), 0), errPubKeyLength},
		{"compressed prefix 0x04", mod(gComp, func(b []byte) { b[0] = 0x04 }), errPubKeyPrefix},
		{"compressed prefix 0x00", mod(gComp, func(b []byte) { b[0] = 0x00 }), errPubKeyPrefix},
		{"uncompressed prefix 0x02", mod(gUncomp, func(b []byte) { b[0] = 0x02 }), errPubKeyPrefix},
		{"uncompressed prefix 0x05", mod(gUncomp, func(b []byte) { b[0] = 0x05 }), errPubKeyPrefix},
		// decred accepts hybrid (0x06/0x07) keys; this reference does not.
		{"hybrid 0x06", mod(gUncomp, func(b []byte) { b[0] = 0x06 }), errPubKeyPrefix},
		{"hybrid 0x07", mod(gUncomp, func(b []byte) { b[0] = 0x07 }), errPubKeyPrefix},
		{"off-curve uncompressed", mod(gUncomp, func(b []byte) { b[64] ^= 1 }), errNotOnCurve},
		{"uncompressed x = p", mod(gUncomp, func(b []byte) { copy(b[1:33], pBytes) }), errPubKeyRange},
		{"compressed x = p", mod(gComp, func(b []byte) { copy(b[1:], pBytes) }), errPubKeyRange},
		{"compressed x with no square root", nonResidue, errNotOnCurve},
		{"all-zero uncompressed point", mod(make([]byte, 65), func(b []byte) { b[0] = 0x04 }), errNotOnCurve},
	}
	for _, c := range cases {
		x, y, err := ParsePublicKey(c.in)
		if err != c.want {
			t.Errorf("%s: err = %v, want %v", c.name, err, c.want)
		}
		if err != nil && (x != nil || y != nil) {
			t.Errorf("%s: non-nil point returned with error", c.name)
		}
	}

	// y >= p in an uncompressed key is rejected as out of range.
	if _, _, err := ParsePublicKey(mod(gUncomp, func(b []byte) { copy(b[33:], pBytes) })); err != errPubKeyRange {
		t.Errorf("uncompressed y = p: err = %v, want errPubKeyRange", err)
	}

	// Parity: 0x02 yields the even root, 0x03 the odd one, and they negate.
	xe, ye, err := ParsePublicKey(mod(gComp, func(b []byte) { b[0] = 0x02 }))
	if err != nil {
		t.Fatal(err)
	}
	xo, yo, err := ParsePublicKey(mod(gComp, func(b []byte) { b[0] = 0x03 }))
	if err != nil {
		t.Fatal(err)
	}
	if xe.Cmp(xo) != 0 || ye.Bit(0) != 0 || yo.Bit(0) != 1 || new(big.Int).Add(ye, yo).Cmp(P()) != 0 {
		t.Error("compressed parity handling is wrong")
	}
}

// FuzzParsePublicKey checks that ParsePublicKey never panics, that anything
// it accepts is on the curve and re-encodes to the input, and that it agrees
// with decred on every 0x02/0x03/0x04 encoding (decred additionally accepts
// hybrid 0x06/0x07 keys, which the reference rejects on purpose).
func FuzzParsePublicKey(f *testing.F) {
	g := uncompress(Gx(), Gy())
	f.Add([]byte{})
	f.Add(compress(Gx(), Gy()))
	f.Add(compress(Gx(), new(big.Int).Sub(P(), Gy()))) // −G, odd y
	f.Add(compress(PublicKey(big.NewInt(3))))
	f.Add(uncompress(PublicKey(big.NewInt(3))))
	f.Add(g)
	f.Add(append([]byte{0x06}, g[1:]...))
	f.Add(append([]byte{0x03}, be32(P())...))
	f.Add(append([]byte{0x04}, make([]byte, 64)...))
	f.Add(bytes.Repeat([]byte{0xff}, 33))
	f.Add(bytes.Repeat([]byte{0xff}, 65))
	f.Fuzz(func(t *testing.T, in []byte) {
		x, y, err := ParsePublicKey(in)
		dk, derr := secp256k1.ParsePubKey(in)
		if err != nil {
			if x != nil || y != nil {
				t.Fatal("point returned with error")
			}
			if derr == nil && in[0] != 0x06 && in[0] != 0x07 {
				t.Fatalf("ref rejects %x (%v) but decred accepts it", in, err)
			}
			return
		}
		if !IsOnCurve(x, y) {
			t.Fatalf("accepted off-curve point from %x", in)
		}
		var re []byte
		if len(in) == 33 {
			re = compress(x, y)
		} else {
			re = uncompress(x, y)
		}
		if !bytes.Equal(re, in) {
			t.Fatalf("re-encoding %x != input %x", re, in)
		}
		if derr != nil {
			t.Fatalf("ref accepts %x but decred rejects it: %v", in, derr)
		}
		if !bytes.Equal(dk.SerializeUncompressed(), uncompress(x, y)) {
			t.Fatalf("ref and decred decode %x differently", in)
		}
	})
}

// TestVerifyLowS: a decred signature (low S) verifies from bytes; its high
// twin, a changed hash and a truncated r do not.
func TestVerifyLowS(t *testing.T) {
	rng := newRand(t)
	priv, _ := randPriv(t, rng)
	hash := randBytes(rng, 32)
	sig := ecdsa.Sign(priv, hash)
	r, s := sig.R(), sig.S()
	rb, sb := r.Bytes(), s.Bytes()
	pub := priv.PubKey().SerializeCompressed()
	if !VerifyLowS(pub, hash, rb[:], sb[:]) {
		t.Fatal("a decred signature does not verify")
	}
	s.Negate()
	hb := s.Bytes()
	if VerifyLowS(pub, hash, rb[:], hb[:]) {
		t.Fatal("a high S verifies")
	}
	if VerifyLowS(pub, randBytes(rng, 32), rb[:], sb[:]) || VerifyLowS(pub, hash, rb[1:], sb[:]) {
		t.Fatal("a changed hash or a short r verifies")
	}
}
