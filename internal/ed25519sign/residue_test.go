package ed25519sign

import (
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"unsafe"

	"filippo.io/edwards25519"

	"github.com/signerkit/signerkit/internal/memscan"
)

const paintSize = 32 << 10

//go:noinline
func paint() byte {
	var b [paintSize]byte
	for i := range b {
		b[i] = 0xa5
	}
	return paintSink(&b)
}

//go:noinline
func paintSink(b *[paintSize]byte) byte { return b[paintSize-1] }

// dirtied returns how many bytes below its own frame are no longer
// paint, scanning up from paintSize below.
//
//go:noinline
func dirtied() int {
	var marker byte
	top := unsafe.Pointer(&marker)
	lowest := 0
	for off := paintSize - 1024; off > 0; off-- {
		if *(*byte)(unsafe.Add(top, -off)) != 0xa5 {
			lowest = off
			break
		}
	}
	return lowest
}

// TestStackDepth measures how deep a key expansion and a sign write
// below their caller's frame, and checks that burnStack covers it.
func TestStackDepth(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector's instrumentation changes frame sizes")
	}
	depth := make(chan int)
	go func() {
		var k PrivateKey
		var sig [64]byte
		msg := make([]byte, 200)
		paint()
		k.setSeed(make([]byte, 32))
		k.sign(&sig, msg, []byte(domPh+"\x07context"))
		depth <- dirtied()
	}()
	d := <-depth
	t.Logf("a key expansion and a sign write %d bytes below their caller; burnStack clears %d", d, burnSize)
	if d == 0 || d >= burnSize-1024 {
		t.Errorf("stack depth %d, burnSize %d: raise burnSize", d, burnSize)
	}
}

// TestNoResidue signs with a fresh random key, wipes it, and then scans
// the whole process's memory (live and freed heap, stacks) for the seed,
// the nonce prefix, the clamped secret scalar and the first bytes of the
// nonce digest: none may be left. The same check on crypto/ed25519 finds
// the seed, which shows the scan can fail.
func TestNoResidue(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector's shadow memory is too large to scan")
	}
	if _, err := memscan.Count(); errors.Is(err, memscan.ErrUnsupported) {
		t.Skip(err)
	}
	msg := []byte("a vote to sign, long enough to need two SHA-512 blocks with the prefix ahead of it, and then some: 0123456789abcdef0123456789abcdef")
	newSeed := func() ([]byte, []memscan.Pattern) {
		seed := make([]byte, 32)
		rand.Read(seed)
		burnStack() // grow this goroutine's stack first: a growth after would free the old one with the residue
		ps := residuePatterns(seed, msg)
		burnStack()
		return seed, ps
	}
	scan := func(ps []memscan.Pattern) []int {
		runtime.GC()
		runtime.GC()
		n, err := memscan.Count(ps...)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	// Each signer runs in a goroutine that then waits, so that its stack,
	// with whatever the sign left below its frames, is still there for the
	// scan.
	park := func(f func()) (release func()) {
		done, hold := make(chan struct{}), make(chan struct{})
		go func() {
			f()
			close(done)
			<-hold
		}()
		<-done
		return func() { close(hold) }
	}

	t.Run("ed25519sign", func(t *testing.T) {
		seed, ps := newSeed()
		release := park(func() {
			k, free := NewLocked()
			k.SetSeed(seed)
			clear(seed)
			for range 20 {
				if !ed25519.Verify(k.Public(), msg, k.Sign(msg)) {
					t.Error("signature does not verify")
				}
			}
			free()
		})
		defer release()
		for i, n := range scan(ps) {
			if n != 0 {
				t.Errorf("%s: %d copies left after the key was released", ps[i].Name, n)
			}
		}
	})
	t.Run("SignSeed", func(t *testing.T) {
		seed, ps := newSeed()
		release := park(func() {
			for range 20 {
				SignSeed(seed, msg)
			}
			clear(seed)
		})
		defer release()
		for i, n := range scan(ps) {
			if n != 0 {
				t.Errorf("%s: %d copies left after the seed was wiped", ps[i].Name, n)
			}
		}
	})
	t.Run("control/crypto-ed25519", func(t *testing.T) {
		seed, ps := newSeed()
		var priv ed25519.PrivateKey
		release := park(func() {
			priv = ed25519.NewKeyFromSeed(seed)
			clear(seed)
			for range 20 {
				ed25519.Sign(priv, msg)
			}
			clear(priv) // as inprocess's Close did, the key still reachable
		})
		defer release()
		defer runtime.KeepAlive(priv)
		n := scan(ps)
		t.Logf("crypto/ed25519 after the key was wiped: %s", report(ps, n))
		if n[0] == 0 {
			t.Error("the scan found no copy of the seed crypto/ed25519 keeps: it cannot tell")
		}
	})
	t.Run("control/no-stack-burn", func(t *testing.T) {
		seed, ps := newSeed()
		release := park(func() {
			var k PrivateKey
			var sig [64]byte
			k.setSeed(seed)
			clear(seed)
			k.sign(&sig, msg, nil)
			k.Wipe()
		})
		defer release()
		n := scan(ps)
		t.Logf("without the stack wipe: %s", report(ps, n))
	})
}

func report(ps []memscan.Pattern, n []int) string {
	var out []string
	for i, p := range ps {
		out = append(out, fmt.Sprintf("%s %d", p.Name, n[i]))
	}
	return strings.Join(out, ", ")
}

// residuePatterns returns the patterns TestNoResidue looks for. It is not
// inlined, so that its frame, with the secrets it computes, is below its
// caller's and burnStack wipes it.
//
//go:noinline
func residuePatterns(seed, msg []byte) []memscan.Pattern {
	var st scratch
	st.d.reset()
	st.d.write(seed)
	st.d.sum(&st.h)
	clamped := st.h
	clamped[0] &= 248
	clamped[31] &= 63
	clamped[31] |= 64
	ps := []memscan.Pattern{
		memscan.NewPattern("seed", seed),
		memscan.NewPattern("nonce prefix", st.h[32:]),
		memscan.NewPattern("clamped scalar", clamped[:32]),
	}
	st.d.reset()
	st.d.write(st.h[32:])
	st.d.write(msg)
	st.d.sum(&st.h)
	ps = append(ps, memscan.NewPattern("nonce digest", st.h[:21]))
	// The scalars as edwards25519.Scalar holds them: Montgomery-form
	// limbs, from which the key follows as directly.
	var s edwards25519.Scalar
	s.SetBytesWithClamping(clamped[:32])
	st.r.SetUniformBytes(st.h[:])
	ps = append(ps,
		memscan.NewPattern("secret scalar (limbs)", (*[32]byte)(unsafe.Pointer(&s))[:]),
		memscan.NewPattern("nonce scalar (limbs)", (*[32]byte)(unsafe.Pointer(&st.r))[:]))
	s = edwards25519.Scalar{}
	clear(clamped[:])
	st.wipe()
	return ps
}
