package ledger_test

// Tests of issue 19's hardening: degenerate public keys refused at the
// handshake, Public returns copies, Sign has a bounded context.

import (
	"context"
	"crypto"
	"crypto/ed25519"
	"errors"
	"testing"
	"time"

	"github.com/signerkit/signerkit/ledger"
	"github.com/signerkit/signerkit/ledger/ledgersim"
	"github.com/signerkit/signerkit/signbytes/signbytestest"
	"github.com/signerkit/signerkit/signer"
)

// TestDegenerateKeyRefused: a device presenting a small-order or
// non-canonical public key is refused by Open and OpenStore, on every
// face.
func TestDegenerateKeyRefused(t *testing.T) {
	identitySigned := append([]byte(nil), ledgersim.SmallOrderKey...)
	identitySigned[31] |= 0x80 // x = 0 with its sign bit set: non-canonical
	order2 := make([]byte, 32) // (0, -1), of order 2
	order2[0] = 0xec
	for i := 1; i < 31; i++ {
		order2[i] = 0xff
	}
	order2[31] = 0x7f
	keys := map[string][]byte{"identity": ledgersim.SmallOrderKey, "identity, sign bit set": identitySigned, "order 2": order2}
	for _, f := range faces[:3] {
		for name, key := range keys {
			t.Run(f.name+"/"+name, func(t *testing.T) {
				dev := ledgersim.MustNew(ledgersim.Config{Time: ledgersim.Accounted, PresentKey: key})
				dial := f.dial(dev, t)
				s, err := ledger.Open(context.Background(), ledger.Config{Dial: dial})
				if !errors.Is(err, signer.ErrInvalidKey) {
					t.Errorf("Open: %v, want ErrInvalidKey", err)
				}
				if s != nil {
					s.Close()
				}
				st, err := ledger.OpenStore(context.Background(), ledger.Config{Dial: dial})
				if !errors.Is(err, signer.ErrInvalidKey) {
					t.Errorf("OpenStore: %v, want ErrInvalidKey", err)
				}
				if st != nil {
					st.Close()
				}
			})
		}
	}
}

// TestPublicIsACopy: a caller who modifies what Public returns changes
// nothing for the Signer: later signs still pass its verify-before-return.
func TestPublicIsACopy(t *testing.T) {
	dev := ledgersim.MustNew(ledgersim.Config{Time: ledgersim.Accounted})
	s := openSigner(t, dev.Dialer(), ledger.Config{})
	p := s.Public().(ed25519.PublicKey)
	for i := range p {
		p[i] = 0
	}
	if !s.Public().(ed25519.PublicKey).Equal(dev.PublicKey()) {
		t.Fatal("Public changed after its result was modified")
	}
	heights := signbytestest.NewHeights("", 1)
	mustSign(t, s, heights.Next(signbytestest.KindPrevote))
}

// TestSignTimeout: Sign, which has no context, gives up after
// Config.SignTimeout on a hung device, and frees the device's one sign
// slot: once the device answers again, signs work.
func TestSignTimeout(t *testing.T) {
	t.Parallel()
	for _, f := range faces[:3] {
		t.Run(f.name, func(t *testing.T) {
			t.Parallel()
			// A device that signs well within the timeout: accounted
			// modeled time counts against the deadline.
			fast := ledgersim.NanoSPlus
			fast.Sign = 10 * time.Millisecond
			dev := ledgersim.MustNew(ledgersim.Config{Time: ledgersim.Accounted, Profile: fast})
			s := openSigner(t, f.dial(dev, t), ledger.Config{SignTimeout: 200 * time.Millisecond})
			heights := signbytestest.NewHeights("", 1)
			// A loaded CI machine (-race, parallel tests) can stall a
			// sign past the 200 ms, so Sign gets a few tries to succeed;
			// a try may fail only by its SignTimeout.
			var msg, sig []byte
			var err error
			for try := 1; ; try++ {
				msg = heights.Next(signbytestest.KindPrevote)
				if sig, err = s.Sign(nil, msg, crypto.Hash(0)); err == nil {
					break
				}
				if !errors.Is(err, context.DeadlineExceeded) || try == 10 {
					t.Fatalf("Sign, try %d: %v", try, err)
				}
				t.Logf("Sign, try %d: %v", try, err)
			}
			if !ed25519.Verify(dev.PublicKey(), msg, sig) {
				t.Fatal("signature does not verify")
			}
			release := dev.Hang()
			done := make(chan error, 1)
			go func() {
				_, err := s.Sign(nil, heights.Next(signbytestest.KindPrevote), crypto.Hash(0))
				done <- err
			}()
			select {
			case err = <-done:
			case <-time.After(10 * time.Second):
				release()
				t.Fatal("Sign on a hung device still blocked after 10 s")
			}
			release()
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("Sign on a hung device: %v, want context.DeadlineExceeded", err)
			}
			mustSign(t, s, heights.Next(signbytestest.KindPrevote))
		})
	}
}
