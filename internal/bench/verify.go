package bench

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/asn1"
	"errors"
	"fmt"
	"math/big"
	"sync"

	"filippo.io/edwards25519"
	"github.com/decred/dcrd/dcrec/secp256k1/v4"
	k1ecdsa "github.com/decred/dcrd/dcrec/secp256k1/v4/ecdsa"

	"github.com/signerkit/signerkit/internal/refsecp256k1"
)

// VerifyCase is one algorithm of the verification table,
// BenchmarkVerify/alg=<Name>/payload=<bytes>. A case times the library's
// own verify call on a signature made before the clock starts.
//
// A case sets Sign, from which RegisterVerify derives Setup; the registry
// test (TestVerifyCases in the root package) then flips bits of the
// signature and of the message and expects the verification to fail. A
// case with Setup alone benchmarks, but that test fails it: a corrupted
// signature cannot be tried through Setup.
type VerifyCase struct {
	// Name is the value of the alg= key in benchmark names, e.g. "p256".
	Name string
	// Payloads overrides the message sizes; nil means LargePayloads.
	Payloads []int
	// Setup makes a key and a signature over a random message of size
	// bytes (untimed) and returns the verification to time; it must return
	// an error on a bad signature. Setup checks the signature verifies
	// before it returns.
	Setup func(size int) (verify func() error, err error)
	// Sign, when set, makes a key and a signature over a random message of
	// size bytes, checks it with an implementation other than the one
	// timed, and names the call to time. Setup is then derived from it.
	Sign func(size int) (Signed, error)
	// Skip, when set and returning a non-empty reason, skips the case (a
	// library that needs cgo in a build without it).
	Skip func() string
}

// Signed is a signature that a VerifyCase's Sign made, with the call that
// verifies it.
type Signed struct {
	Msg, Sig []byte
	// Verify is the verification timed: the library's call with nothing
	// around it, returning an error when sig is not a signature over msg.
	Verify func(msg, sig []byte) error
}

// SkipReason returns why c cannot run here (Skip's answer), or "".
func (c VerifyCase) SkipReason() string {
	if c.Skip == nil {
		return ""
	}
	return c.Skip()
}

// Sizes returns the payload sizes of c.
func (c VerifyCase) Sizes() []int {
	if c.Payloads != nil {
		return c.Payloads
	}
	return LargePayloads
}

var verifyCases []VerifyCase

// RegisterVerify adds c to the verification table. It panics on an empty
// or duplicate name or a case with neither Setup nor Sign, which are
// programming errors in a registration file.
func RegisterVerify(c VerifyCase) {
	mu.Lock()
	defer mu.Unlock()
	if c.Name == "" || (c.Setup == nil && c.Sign == nil) {
		panic(fmt.Sprintf("bench: incomplete verify case %+v", c))
	}
	for _, o := range verifyCases {
		if o.Name == c.Name {
			panic("bench: verify case registered twice: " + c.Name)
		}
	}
	if c.Setup == nil {
		sign := c.Sign
		c.Setup = func(size int) (func() error, error) {
			s, err := sign(size)
			if err != nil {
				return nil, err
			}
			if err := s.Verify(s.Msg, s.Sig); err != nil {
				return nil, fmt.Errorf("a fresh signature does not verify: %w", err)
			}
			return func() error { return s.Verify(s.Msg, s.Sig) }, nil
		}
	}
	verifyCases = append(verifyCases, c)
}

// VerifyCases returns the registered verification cases in registration
// order.
func VerifyCases() []VerifyCase {
	mu.Lock()
	defer mu.Unlock()
	return append([]VerifyCase(nil), verifyCases...)
}

func randomMessage(size int) []byte {
	msg := make([]byte, size)
	rand.Read(msg)
	return msg
}

// The floor of each algorithm: the library the repository signs with,
// called directly. Each signature is checked once, before timing, by an
// implementation that shares no code with the one timed (a textbook
// math/big one, or filippo.io/edwards25519 for crypto/ed25519).
func init() {
	RegisterVerify(VerifyCase{Name: "ed25519", Sign: signEd25519})
	RegisterVerify(VerifyCase{Name: "p256", Sign: signECDSA(elliptic.P256(), crypto.SHA256)})
	RegisterVerify(VerifyCase{Name: "p384", Sign: signECDSA(elliptic.P384(), crypto.SHA384)})
	RegisterVerify(VerifyCase{Name: "secp256k1", Sign: signSecp256k1})
	for _, bits := range []int{2048, 4096} {
		RegisterVerify(VerifyCase{Name: fmt.Sprintf("rsa%d-pkcs1v15", bits), Sign: signRSA(bits, false)})
		RegisterVerify(VerifyCase{Name: fmt.Sprintf("rsa%d-pss", bits), Sign: signRSA(bits, true)})
	}
}

func signEd25519(size int) (Signed, error) {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return Signed{}, err
	}
	msg := randomMessage(size)
	sig := ed25519.Sign(priv, msg)
	if err := refVerifyEd25519(pub, msg, sig); err != nil {
		return Signed{}, err
	}
	return Signed{Msg: msg, Sig: sig, Verify: func(msg, sig []byte) error {
		if !ed25519.Verify(pub, msg, sig) {
			return errors.New("bench: ed25519 signature does not verify")
		}
		return nil
	}}, nil
}

// refVerifyEd25519 checks an RFC 8032 signature on filippo.io/edwards25519:
// [S]B = R + [k]A with k = SHA-512(R ‖ A ‖ msg).
func refVerifyEd25519(pub ed25519.PublicKey, msg, sig []byte) error {
	bad := errors.New("bench: ed25519 signature does not verify with filippo.io/edwards25519")
	if len(sig) != ed25519.SignatureSize {
		return bad
	}
	a, err := new(edwards25519.Point).SetBytes(pub)
	if err != nil {
		return bad
	}
	s, err := edwards25519.NewScalar().SetCanonicalBytes(sig[32:])
	if err != nil {
		return bad
	}
	h := sha512.New()
	h.Write(sig[:32])
	h.Write(pub)
	h.Write(msg)
	k, err := edwards25519.NewScalar().SetUniformBytes(h.Sum(nil))
	if err != nil {
		return bad
	}
	r := new(edwards25519.Point).VarTimeDoubleScalarBaseMult(k, new(edwards25519.Point).Negate(a), s)
	if !bytes.Equal(r.Bytes(), sig[:32]) {
		return bad
	}
	return nil
}

func signECDSA(curve elliptic.Curve, hash crypto.Hash) func(int) (Signed, error) {
	name := curve.Params().Name
	return func(size int) (Signed, error) {
		priv, err := ecdsa.GenerateKey(curve, rand.Reader)
		if err != nil {
			return Signed{}, err
		}
		pub := &priv.PublicKey
		msg := randomMessage(size)
		sig, err := ecdsa.SignASN1(rand.Reader, priv, digest(hash, msg))
		if err != nil {
			return Signed{}, err
		}
		// A copy of the curve's parameters takes crypto/elliptic's generic
		// math/big arithmetic, not the constant-time code ecdsa runs on.
		params := *curve.Params()
		point, err := pub.Bytes() // 04 ‖ X ‖ Y
		if err != nil {
			return Signed{}, err
		}
		half := (len(point) - 1) / 2
		x, y := new(big.Int).SetBytes(point[1:1+half]), new(big.Int).SetBytes(point[1+half:])
		if !refVerifyECDSA(&params, x, y, digest(hash, msg), sig) {
			return Signed{}, fmt.Errorf("bench: %s signature does not verify with textbook ECDSA", name)
		}
		return Signed{Msg: msg, Sig: sig, Verify: func(msg, sig []byte) error {
			if !ecdsa.VerifyASN1(pub, digest(hash, msg), sig) {
				return fmt.Errorf("bench: %s signature does not verify", name)
			}
			return nil
		}}, nil
	}
}

func signSecp256k1(size int) (Signed, error) {
	priv, err := secp256k1.GeneratePrivateKey()
	if err != nil {
		return Signed{}, err
	}
	pub := priv.PubKey()
	msg := randomMessage(size)
	sig := k1ecdsa.Sign(priv, digest(crypto.SHA256, msg)).Serialize()
	if !refVerifySecp256k1(pub.X(), pub.Y(), digest(crypto.SHA256, msg), sig) {
		return Signed{}, errors.New("bench: secp256k1 signature does not verify with the reference secp256k1")
	}
	return Signed{Msg: msg, Sig: sig, Verify: func(msg, sig []byte) error {
		s, err := k1ecdsa.ParseDERSignature(sig)
		if err != nil {
			return fmt.Errorf("bench: secp256k1 signature: %w", err)
		}
		if !s.Verify(digest(crypto.SHA256, msg), pub) {
			return errors.New("bench: secp256k1 signature does not verify")
		}
		return nil
	}}, nil
}

// rsaKeys are generated once per size: a 4096-bit key can take seconds.
var rsaKeys = map[int]func() (*rsa.PrivateKey, error){
	2048: rsaKey,
	4096: sync.OnceValues(func() (*rsa.PrivateKey, error) { return rsa.GenerateKey(rand.Reader, 4096) }),
}

func signRSA(bits int, pss bool) func(int) (Signed, error) {
	opts := &rsa.PSSOptions{SaltLength: sha256.Size, Hash: crypto.SHA256}
	return func(size int) (Signed, error) {
		priv, err := rsaKeys[bits]()
		if err != nil {
			return Signed{}, err
		}
		pub := &priv.PublicKey
		msg := randomMessage(size)
		d := digest(crypto.SHA256, msg)
		var sig []byte
		if pss {
			sig, err = rsa.SignPSS(rand.Reader, priv, crypto.SHA256, d, opts)
		} else {
			sig, err = rsa.SignPKCS1v15(rand.Reader, priv, crypto.SHA256, d)
		}
		if err != nil {
			return Signed{}, err
		}
		if err := refVerifyRSA(pub, d, sig, pss); err != nil {
			return Signed{}, err
		}
		return Signed{Msg: msg, Sig: sig, Verify: func(msg, sig []byte) error {
			if pss {
				return rsa.VerifyPSS(pub, crypto.SHA256, digest(crypto.SHA256, msg), sig, opts)
			}
			return rsa.VerifyPKCS1v15(pub, crypto.SHA256, digest(crypto.SHA256, msg), sig)
		}}, nil
	}
}

func digest(hash crypto.Hash, msg []byte) []byte {
	switch hash {
	case crypto.SHA256:
		d := sha256.Sum256(msg)
		return d[:]
	case crypto.SHA384:
		d := sha512.Sum384(msg)
		return d[:]
	}
	panic("bench: no digest for " + hash.String())
}

// refVerifyECDSA is textbook ECDSA verification (SEC 1 v2, 4.1.4) on
// generic curve arithmetic: crypto/elliptic's CurveParams methods, which
// Go deprecated as offering no security property (they are variable-time
// math/big). That is what is wanted of a check of a public signature that
// shares no code with the constant-time crypto/ecdsa it checks.
func refVerifyECDSA(params *elliptic.CurveParams, x, y *big.Int, digest, der []byte) bool {
	var rs struct{ R, S *big.Int }
	if rest, err := asn1.Unmarshal(der, &rs); err != nil || len(rest) != 0 {
		return false
	}
	n := params.N
	if rs.R.Sign() <= 0 || rs.S.Sign() <= 0 || rs.R.Cmp(n) >= 0 || rs.S.Cmp(n) >= 0 {
		return false
	}
	e := new(big.Int).SetBytes(digest)
	if excess := len(digest)*8 - n.BitLen(); excess > 0 {
		e.Rsh(e, uint(excess))
	}
	w := new(big.Int).ModInverse(rs.S, n)
	u1 := new(big.Int).Mod(new(big.Int).Mul(e, w), n)
	u2 := new(big.Int).Mod(new(big.Int).Mul(rs.R, w), n)
	//lint:ignore SA1019 the generic arithmetic is the independent check; see above
	x1, y1 := params.ScalarBaseMult(u1.Bytes())
	//lint:ignore SA1019 the generic arithmetic is the independent check; see above
	x2, y2 := params.ScalarMult(x, y, u2.Bytes())
	//lint:ignore SA1019 the generic arithmetic is the independent check; see above
	px, py := params.Add(x1, y1, x2, y2)
	if px.Sign() == 0 && py.Sign() == 0 {
		return false
	}
	return new(big.Int).Mod(px, n).Cmp(rs.R) == 0
}

func refVerifySecp256k1(x, y *big.Int, digest, der []byte) bool {
	var rs struct{ R, S *big.Int }
	if rest, err := asn1.Unmarshal(der, &rs); err != nil || len(rest) != 0 {
		return false
	}
	return refsecp256k1.Verify(x, y, digest, rs.R, rs.S)
}

// refVerifyRSA checks an RSA signature with SHA-256 by math/big: s^e mod n
// against EMSA-PKCS1-v1_5 (RFC 8017, 9.2) or EMSA-PSS with a 32-byte salt
// and MGF1-SHA-256 (9.1.2).
func refVerifyRSA(pub *rsa.PublicKey, digest, sig []byte, pss bool) error {
	bad := func(why string) error { return errors.New("bench: RSA signature does not verify by math/big: " + why) }
	k := (pub.N.BitLen() + 7) / 8
	if len(sig) != k {
		return bad("wrong length")
	}
	s := new(big.Int).SetBytes(sig)
	if s.Cmp(pub.N) >= 0 {
		return bad("s ≥ n")
	}
	m := new(big.Int).Exp(s, big.NewInt(int64(pub.E)), pub.N)
	if !pss {
		em := m.FillBytes(make([]byte, k))
		prefix := []byte{0x30, 0x31, 0x30, 0x0d, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x01, 0x05, 0x00, 0x04, 0x20}
		t := append(prefix, digest...)
		want := append([]byte{0, 1}, bytes.Repeat([]byte{0xff}, k-3-len(t))...)
		want = append(append(want, 0), t...)
		if !bytes.Equal(em, want) {
			return bad("not the PKCS #1 v1.5 encoding of the digest")
		}
		return nil
	}
	emBits := pub.N.BitLen() - 1
	emLen := (emBits + 7) / 8
	if m.BitLen() > emBits {
		return bad("representative too long")
	}
	em := m.FillBytes(make([]byte, emLen))
	const hLen, sLen = sha256.Size, sha256.Size
	if em[emLen-1] != 0xbc {
		return bad("no 0xbc trailer")
	}
	dbLen := emLen - hLen - 1
	h := em[dbLen : emLen-1]
	db := em[:dbLen]
	// MGF1 with SHA-256, xored into db in place.
	for c, off := uint32(0), 0; off < dbLen; c, off = c+1, off+hLen {
		mask := sha256.Sum256(append(append([]byte(nil), h...), byte(c>>24), byte(c>>16), byte(c>>8), byte(c)))
		for i := 0; i < hLen && off+i < dbLen; i++ {
			db[off+i] ^= mask[i]
		}
	}
	db[0] &= 0xff >> (8*emLen - emBits)
	ps := dbLen - sLen - 1
	for _, b := range db[:ps] {
		if b != 0 {
			return bad("padding not zero")
		}
	}
	if db[ps] != 1 {
		return bad("no 0x01 separator")
	}
	mp := sha256.New()
	mp.Write(make([]byte, 8))
	mp.Write(digest)
	mp.Write(db[ps+1:])
	if !bytes.Equal(mp.Sum(nil), h) {
		return bad("hash mismatch")
	}
	return nil
}
