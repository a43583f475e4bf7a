package ledgersim_test

import (
	"context"
	"crypto/ed25519"
	"errors"
	"testing"
	"time"

	"github.com/signerkit/signerkit/ledger"
	"github.com/signerkit/signerkit/ledger/ledgersim"
	"github.com/signerkit/signerkit/signbytes"
	"github.com/signerkit/signerkit/signer"
)

// The app moves its height/round/step when it signs, before its answer
// leaves the device. A client that is gone before the answer arrives (a
// signer process killed mid-sign, a connection dropped, a deadline that
// ran out) loses the signature, and the app refuses the same vote again
// after the client comes back: nothing a host does gets that signature
// back (docs/daemon.md, "A crash during a Ledger sign"). These tests
// reproduce it on each face.

// TestLostSignRefusedAfterReconnect: the client is cut off while the
// device signs a prevote (the connection closed under a realtime sign, as
// when the signer process is killed; or a deadline shorter than the
// modeled sign); after it reconnects, the same prevote is refused with
// 0x6985, and so is a new connection's, while the next step signs.
func TestLostSignRefusedAfterReconnect(t *testing.T) {
	prevote, precommit := vote(signbytes.Prevote, 7, 0), vote(signbytes.Precommit, 7, 0)
	cases := []struct {
		name string
		// setup returns the device and a dialer for it; cut signs msg
		// through s and cuts the client off while the device signs,
		// returning the sign's error.
		setup func(t *testing.T) (*ledgersim.Device, ledger.Dialer)
		cut   func(t *testing.T, dev *ledgersim.Device, s *ledger.Signer, msg []byte) error
	}{
		{"speculos-connection-closed", func(t *testing.T) (*ledgersim.Device, ledger.Dialer) {
			p := ledgersim.NanoSPlus
			p.Sign = time.Hour // slept: the client is gone long before the answer
			dev := ledgersim.MustNew(ledgersim.Config{Time: ledgersim.Realtime, Profile: p})
			srv, err := dev.ServeSpeculos()
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { srv.Close() }) // ends the hour's sleep
			return dev, ledger.SpeculosDialer(srv.Addr())
		}, closeWhileSigning},
		{"apdu-connection-closed", func(t *testing.T) (*ledgersim.Device, ledger.Dialer) {
			p := ledgersim.NanoSPlus
			p.Sign = time.Hour
			dev := ledgersim.MustNew(ledgersim.Config{Time: ledgersim.Realtime, Profile: p})
			return dev, dev.Dialer()
		}, closeWhileSigning},
		{"speculos-deadline", func(t *testing.T) (*ledgersim.Device, ledger.Dialer) {
			dev := slowDevice()
			return dev, speculosSim(t, dev)
		}, signPastDeadline},
		{"hid-deadline", func(t *testing.T) (*ledgersim.Device, ledger.Dialer) {
			dev := slowDevice()
			return dev, dev.HIDDialer()
		}, signPastDeadline},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dev, dial := c.setup(t)
			s1, err := ledger.Open(context.Background(), ledger.Config{Dial: dial})
			if err != nil {
				t.Fatal(err)
			}
			defer s1.Close()
			if err := c.cut(t, dev, s1, prevote); err == nil {
				t.Fatal("the cut-off sign returned a signature")
			}
			if st := dev.Stats(); st.Signatures != 1 {
				t.Fatalf("device stats %+v: want the prevote signed on the device", st)
			}

			// The client reconnects (a restarted process opens the device
			// afresh) and asks for the same prevote: refused.
			s2, err := ledger.Open(context.Background(), ledger.Config{Dial: dial})
			if err != nil {
				t.Fatal(err)
			}
			defer s2.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			_, err = s2.SignContext(ctx, prevote)
			// The daemon matches the refusal by signer.ErrDoubleSign.
			wantSW(t, "the same prevote after the reconnect", err, 0x6985, signer.ErrDoubleSign)
			// A refusal leaves the app as it was: the lost prevote stays
			// lost, and the precommit after it signs.
			if dev.Time() == ledgersim.Realtime {
				return // its sign would sleep the hour
			}
			ctx, cancel = context.WithTimeout(context.Background(), longTime)
			defer cancel()
			sig, err := s2.SignContext(ctx, precommit)
			if err != nil || !ed25519.Verify(dev.PublicKey(), precommit, sig) {
				t.Fatalf("the precommit after the lost prevote: %v", err)
			}
			if st := dev.Stats(); st.Signatures != 2 || st.Refused != 1 {
				t.Errorf("device stats %+v: want 2 signatures and 1 refusal", st)
			}
		})
	}
}

// closeWhileSigning starts the sign of msg, waits until the device has
// signed it (it then sleeps its modeled device time before answering),
// and closes the client, as a killed process's connection closes.
func closeWhileSigning(t *testing.T, dev *ledgersim.Device, s *ledger.Signer, msg []byte) error {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		_, err := s.SignContext(context.Background(), msg)
		done <- err
	}()
	deadline := time.Now().Add(10 * time.Second) // only stops a hang
	for dev.Stats().Signatures == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the device never signed")
		}
		time.Sleep(time.Millisecond)
	}
	s.Close()
	select {
	case err := <-done:
		if !errors.Is(err, signer.ErrClosed) {
			t.Errorf("the cut-off sign: %v, want signer.ErrClosed", err)
		}
		return err
	case <-time.After(10 * time.Second):
		t.Fatal("the sign did not return after the client closed")
	}
	return nil
}

// signPastDeadline signs msg under a deadline shorter than the device's
// modeled sign: the app signs, and the caller gives up before its answer.
func signPastDeadline(t *testing.T, _ *ledgersim.Device, s *ledger.Signer, msg []byte) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), shortTime)
	defer cancel()
	_, err := s.SignContext(ctx, msg)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a %v sign under %v: %v, want context.DeadlineExceeded", slowSignTime, shortTime, err)
	}
	return err
}
