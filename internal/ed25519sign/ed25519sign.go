// Package ed25519sign signs Ed25519 (RFC 8032: pure Ed25519, and
// Ed25519ctx and Ed25519ph for crypto.Signer callers) on
// filippo.io/edwards25519 without leaving copies of the key behind.
//
// crypto/ed25519 cannot promise that. Go 1.24 and later (checked on Go
// 1.26.8) keep, for every ed25519.PrivateKey passed to Sign or to
// PrivateKey.Sign, a process-wide cache entry (crypto/ed25519's
// privateKeyCache, a crypto/internal/fips140cache.Cache keyed by a weak
// pointer to the key's first byte) holding an expanded key — the seed,
// the public key, the secret scalar and the nonce prefix. The entry lives
// as long as the key's backing array is reachable; when the array is
// collected a cleanup drops the entry, and the garbage collector frees
// it unwiped: the seed stays in freed memory until something reuses it.
// Clearing the caller's key does not touch it. NewKeyFromSeed and
// GenerateKey leave an expanded key and the SHA-512 of the seed in
// memory the same way, and crypto/sha512 keeps its block buffer — here
// holding the seed or the nonce prefix — in an object the caller cannot
// wipe, and copies it onto the stack in Sum.
//
// Here every byte that depends on the seed is in memory the caller owns
// or on the goroutine's stack, and is wiped: a PrivateKey by Wipe (or, from
// NewLocked, by its release function, in memory locked in RAM and left
// out of core dumps where the system allows: see internal/hardening);
// per sign, the nonce's SHA-512 state (this package's own SHA-512, whose
// message schedule lives in the wiped state), the 64-byte nonce digest and
// the nonce scalar are cleared (the challenge hash, over R, the public key
// and the message, holds nothing secret and is crypto/sha512's), and the
// stack below the signing call, where filippo.io/edwards25519's arithmetic
// leaves its temporaries (the clamped scalar in SetBytesWithClamping, the
// nonce digest's pieces in SetUniformBytes, the signed radix-16 digits of
// the nonce in ScalarBaseMult), is overwritten with zeros before Sign
// returns (see burnStack). SignSeed expands a key from its seed for one
// signature and wipes it, for callers that keep no key resident;
// NewKeyFromSeed and CheckPrivateKey expand one to make or check
// crypto/ed25519's 64-byte form, and wipe it too.
//
// What remains beyond reach: values the Go compiler keeps only in
// registers or spills into the signing call's own frame (which the
// explicit wipes cover where they are named variables), the goroutine's
// stack if the runtime moves it during a sign (a stack grows by copying,
// and the old one is freed unwiped; Sign grows the stack to its full
// depth before it touches the key, so this needs a stack shrink by the
// garbage collector in the middle of a sign), and whatever the caller does
// with the seed it passes in.
//
// # Speed
//
// A PrivateKey holds the expanded key (scalar, prefix, public key) as
// crypto/ed25519's cache does, so Sign does the work ed25519.Sign does:
// one SHA-512 over prefix‖message, a fixed-base scalar multiplication, one
// SHA-512 over R‖A‖message and a scalar multiply-add. The hashes of
// secret input (the key expansion, the nonce) use this package's SHA-512,
// portable Go where crypto/sha512 uses assembly; the challenge hash, over
// public input, uses crypto/sha512 (its state on the stack, no
// allocation). Each sign zeroes 8 KiB of stack twice; ed25519.Sign for
// its part looks its key up in the cache (a weak pointer, a sync.Map and
// a 64-byte compare) on every call, so a sign runs fewer instructions than
// ed25519.Sign (make overhead counts them; docs/measurements.md).
// BenchmarkSign compares the two, and SignSeed, which expands the key too
// (a SHA-512 and a second fixed-base multiplication), in one run.
package ed25519sign

import (
	"crypto"
	"crypto/sha512"
	"crypto/subtle"
	"errors"
	"strconv"
	"sync"
	"unsafe"

	"filippo.io/edwards25519"

	"github.com/signerkit/signerkit/hardening"
)

const (
	// SeedSize is the size of an RFC 8032 private key (a seed).
	SeedSize = 32
	// PublicKeySize is the size of a public key.
	PublicKeySize = 32
	// PrivateKeySize is the size of crypto/ed25519's private key form,
	// seed‖public key.
	PrivateKeySize = 64
	// SignatureSize is the size of a signature.
	SignatureSize = 64
)

// PrivateKey is an expanded Ed25519 key. It holds no pointers, so it may
// live on a stack, in the Go heap or in memory from NewLocked. The zero
// value is not a key: fill it with SetSeed. A PrivateKey must not be
// copied after SetSeed (a copy is a copy of the key that Wipe does not
// reach).
type PrivateKey struct {
	seed   [SeedSize]byte
	pub    [PublicKeySize]byte
	s      edwards25519.Scalar
	prefix [32]byte
}

// SetSeed expands seed (32 bytes) into k, as RFC 8032 section 5.1.5 does:
// SHA-512 of the seed, the clamped lower half as the secret scalar, the
// upper half as the nonce prefix, and the public key. k holds a copy of
// seed; seed is not kept.
func (k *PrivateKey) SetSeed(seed []byte) error {
	if len(seed) != SeedSize {
		return errors.New("ed25519sign: seed of " + strconv.Itoa(len(seed)) + " bytes, want 32")
	}
	buildBaseTable()
	burnStack() // grow the stack to the expansion's depth first
	k.setSeed(seed)
	burnStack()
	return nil
}

// setSeed and sign are never inlined: their frames, with every secret
// temporary, are then below the exported entry points, where burnStack
// reaches.
//
//go:noinline
func (k *PrivateKey) setSeed(seed []byte) {
	var st scratch
	st.d.reset()
	st.d.write(seed)
	st.d.sum(&st.h)
	st.d.wipe()                         // the seed is in its buffer
	k.s.SetBytesWithClamping(st.h[:32]) // cannot fail: 32 bytes
	copy(k.prefix[:], st.h[32:])
	var a edwards25519.Point
	a.ScalarBaseMult(&k.s)
	copy(k.pub[:], a.Bytes())
	copy(k.seed[:], seed)
	st.wipe()
}

// SetPrivateKey sets k from crypto/ed25519's 64-byte form, seed‖public
// key, and checks that the public half is the one the seed gives.
func (k *PrivateKey) SetPrivateKey(priv []byte) error {
	if len(priv) != PrivateKeySize {
		return errors.New("ed25519sign: private key of " + strconv.Itoa(len(priv)) + " bytes, want 64")
	}
	buildBaseTable()
	burnStack()
	k.setSeed(priv[:SeedSize])
	burnStack()
	if subtle.ConstantTimeCompare(k.pub[:], priv[SeedSize:]) != 1 {
		k.Wipe()
		return errors.New("ed25519sign: the public key is not the one the seed gives")
	}
	return nil
}

// Public returns a copy of the public key.
func (k *PrivateKey) Public() []byte {
	return append(make([]byte, 0, PublicKeySize), k.pub[:]...)
}

// AppendSeed appends the seed to dst; the caller wipes the result.
func (k *PrivateKey) AppendSeed(dst []byte) []byte { return append(dst, k.seed[:]...) }

// AppendPrivateKey appends crypto/ed25519's form, seed‖public key, to dst;
// the caller wipes the result.
func (k *PrivateKey) AppendPrivateKey(dst []byte) []byte {
	return append(append(dst, k.seed[:]...), k.pub[:]...)
}

// Wipe zeroes k.
//
//go:noinline
func (k *PrivateKey) Wipe() {
	*k = PrivateKey{}
}

// Sign returns the pure Ed25519 signature of msg.
func (k *PrivateKey) Sign(msg []byte) []byte {
	sig := make([]byte, SignatureSize)
	k.SignInto((*[SignatureSize]byte)(sig), msg)
	return sig
}

// SignInto writes the pure Ed25519 signature of msg to sig.
func (k *PrivateKey) SignInto(sig *[SignatureSize]byte, msg []byte) {
	buildBaseTable()
	burnStack() // grow the stack to the signing depth before any secret is on it
	k.sign(sig, msg, nil)
	burnStack()
}

// The dom2 prefixes of RFC 8032 section 5.1, before the context's length
// and the context.
const (
	domPh  = "SigEd25519 no Ed25519 collisions\x01"
	domCtx = "SigEd25519 no Ed25519 collisions\x00"
)

// SignOptions signs as crypto/ed25519's PrivateKey.Sign does for opts:
// Ed25519 when opts.HashFunc() is 0 and there is no context, Ed25519ctx
// when opts is an *ed25519.Options with a Context, Ed25519ph over a
// SHA-512 digest when opts.HashFunc() is crypto.SHA512 (context is then
// opts.Context, if any). context is the *ed25519.Options Context, which
// the caller reads from opts (this package does not import
// crypto/ed25519's types to keep the two apart).
func (k *PrivateKey) SignOptions(msg []byte, hash crypto.Hash, context string) ([]byte, error) {
	dom := ""
	switch {
	case hash == crypto.SHA512:
		if len(msg) != 64 {
			return nil, errors.New("ed25519sign: bad Ed25519ph message hash length: " + strconv.Itoa(len(msg)))
		}
		dom = domPh
	case hash == 0 && context != "":
		dom = domCtx
	case hash != 0:
		return nil, errors.New("ed25519sign: expected opts.HashFunc() zero (unhashed message, for standard Ed25519) or SHA-512 (for Ed25519ph)")
	}
	if len(context) > 255 {
		return nil, errors.New("ed25519sign: context of " + strconv.Itoa(len(context)) + " bytes, want at most 255")
	}
	// dom2(phflag, context), which both hashes of the sign start with
	// (RFC 8032 section 5.1.6, steps 2 and 4), put together once.
	var buf [len(domPh) + 1 + 255]byte
	var dom2 []byte
	if dom != "" {
		dom2 = append(append(append(buf[:0], dom...), byte(len(context))), context...)
	}
	sig := new([SignatureSize]byte)
	buildBaseTable()
	burnStack()
	k.sign(sig, msg, dom2)
	burnStack()
	return sig[:], nil
}

// scratch is the per-call secret state, wiped before the call returns.
type scratch struct {
	d digest
	h [64]byte
	r edwards25519.Scalar
}

//go:noinline
func (st *scratch) wipe() {
	*st = scratch{}
}

//go:noinline
func (k *PrivateKey) sign(sig *[SignatureSize]byte, msg, dom2 []byte) {
	var st scratch
	// r = SHA-512(dom2 ‖ prefix ‖ M) mod l
	st.d.reset()
	st.d.write(dom2)
	st.d.write(k.prefix[:])
	st.d.write(msg)
	st.d.sum(&st.h)
	st.r.SetUniformBytes(st.h[:]) // cannot fail: 64 bytes
	st.d.wipe()                   // the prefix is in its buffer
	var R edwards25519.Point
	R.ScalarBaseMult(&st.r)
	copy(sig[:32], R.Bytes())
	// k = SHA-512(dom2 ‖ R ‖ A ‖ M) mod l: public input, hashed by
	// crypto/sha512 (its state, on this frame, holds nothing secret).
	h := sha512.New()
	h.Write(dom2)
	h.Write(sig[:32])
	h.Write(k.pub[:])
	h.Write(msg)
	var c, s edwards25519.Scalar
	c.SetUniformBytes(h.Sum(st.h[:0]))
	s.MultiplyAdd(&c, &k.s, &st.r) // S = r + c·s mod l
	copy(sig[32:], s.Bytes())
	st.wipe()
}

// SignSeed returns the pure Ed25519 signature of msg by the key of seed,
// expanding the key for this call only and wiping it, and the stack the
// expansion and the sign used, before it returns.
func SignSeed(seed, msg []byte) ([]byte, error) {
	if len(seed) != SeedSize {
		return nil, errors.New("ed25519sign: seed of " + strconv.Itoa(len(seed)) + " bytes, want 32")
	}
	sig := new([SignatureSize]byte)
	buildBaseTable()
	burnStack()
	signSeed(sig, seed, msg)
	burnStack()
	return sig[:], nil
}

//go:noinline
func signSeed(sig *[SignatureSize]byte, seed, msg []byte) {
	var k PrivateKey
	k.setSeed(seed)
	k.sign(sig, msg, nil)
	k.Wipe()
}

var baseTableOnce sync.Once

// buildBaseTable has filippo.io/edwards25519 build its fixed-base table
// before any secret is on the stack. It does so on the first
// ScalarBaseMult, deep in the call, and the stack growth that can cause
// would copy a key expansion's live frames to a new stack and free the old
// one, seed and all, unwiped. It runs on first use rather than at package
// init (where it cost about 1 ms of every importing program's start-up);
// after the first call it is one atomic load.
func buildBaseTable() {
	baseTableOnce.Do(func() {
		var p edwards25519.Point
		p.ScalarBaseMult(edwards25519.NewScalar())
	})
}

// NewLocked returns a zero PrivateKey in memory from hardening.Alloc:
// outside the Go heap, locked in RAM and left out of core dumps where the
// system allows. release wipes it and gives the memory back; the key must
// not be used after. A key that is never released stays mapped.
func NewLocked() (k *PrivateKey, release func()) {
	buf := hardening.Alloc(int(unsafe.Sizeof(PrivateKey{})))
	b := buf.Bytes()
	if uintptr(unsafe.Pointer(&b[0]))%unsafe.Alignof(PrivateKey{}) != 0 {
		buf.Free()
		k = new(PrivateKey)
		return k, k.Wipe
	}
	// The memory holds no Go pointers, and PrivateKey has none.
	k = (*PrivateKey)(unsafe.Pointer(&b[0]))
	return k, buf.Free
}
