package keybase

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"runtime"
	"testing"

	"github.com/signerkit/signerkit/internal/ed25519sign"
	"github.com/signerkit/signerkit/internal/memscan"
	"github.com/signerkit/signerkit/signer"
)

// TestEd25519NoResidue signs 20 times with an Ed25519 key in each mode,
// closes the Signer and scans the whole process's memory for the seed
// (issue 19, point 1). Signing through crypto/ed25519 left about one copy
// per sign in PerSign mode — its key cache holds the seed of every key
// passed to Sign, and NewKeyFromSeed leaves an expanded key — and one
// that outlived Close in UnlockOnce mode.
func TestEd25519NoResidue(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector's shadow memory is too large to scan")
	}
	if _, err := memscan.Count(); errors.Is(err, memscan.ErrUnsupported) {
		t.Skip(err)
	}
	ctx := context.Background()
	pass := []byte("residue test passphrase")
	for _, mode := range []Mode{PerSign, UnlockOnce} {
		t.Run(mode.String(), func(t *testing.T) {
			// Making the armor is not under test, and now and then leaves
			// a copy of the seed (stacks moved in bcrypt, say): count the
			// copies before the Signer opens and require no more after.
			p, armor, err := newArmor(pass)
			if err != nil {
				t.Fatal(err)
			}
			before := count(t, p)
			s, err := OpenArmor(ctx, armor, signer.SecretBytes(pass), mode)
			if err != nil {
				t.Fatal(err)
			}
			msg := []byte("vote")
			for range 20 {
				sig, err := s.SignContext(ctx, msg)
				if err != nil || !ed25519.Verify(s.Public().(ed25519.PublicKey), msg, sig) {
					t.Fatal("sign failed or does not verify", err)
				}
			}
			s.Close()
			if after := count(t, p); after > before {
				t.Errorf("%d copies of the seed in memory after 20 signs, Close and GC, %d before the Signer opened", after, before)
			} else if before != 0 {
				t.Logf("making the armor left %d copies of the seed; opening, signing and Close added none", before)
			}
			runtime.KeepAlive(s)
		})
	}
}

func count(t *testing.T, p memscan.Pattern) int {
	t.Helper()
	runtime.GC()
	runtime.GC()
	n, err := memscan.Count(p)
	if err != nil {
		t.Fatal(err)
	}
	return n[0]
}

// newArmor makes a random Ed25519 key and returns a Pattern of its seed
// and the key encrypted under pass. It works in a goroutine of its own
// that then exits, so that nothing of the key stays on the test's stack.
func newArmor(pass []byte) (p memscan.Pattern, armor []byte, err error) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		seed := make([]byte, ed25519.SeedSize)
		rand.Read(seed)
		p = memscan.NewPattern("seed", seed)
		x := new(ed25519sign.PrivateKey)
		x.SetSeed(seed)
		clear(seed)
		priv := ed25519.PrivateKey(x.AppendPrivateKey(make([]byte, 0, ed25519.PrivateKeySize)))
		x.Wipe()
		armor, err = EncryptArmor(context.Background(), priv, pass, MinCost)
		clear(priv)
	}()
	<-done
	return p, armor, err
}
