package signbytes

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/signerkit/signerkit/signer"
)

// FuzzParse checks that Parse never panics, that every error wraps
// signer.ErrInvalidMessage, and that whatever it accepts is rebuilt byte
// for byte in each dialect it reports, before and after a timestamp change.
func FuzzParse(f *testing.F) {
	for _, r := range referenceMessages(1) {
		r.m.Format = TM2
		f.Add(mustBytes(f, r.m))
	}
	r := rand.New(rand.NewPCG(3, 4))
	for range 32 {
		f.Add(mustBytes(f, randomMessage(r)))
	}
	f.Add([]byte{0x00})
	f.Add(mustBytes(f, Message{Format: CometBFT, Phase: Prevote, Height: 1, Timestamp: time.Unix(0, 0)}))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := Parse(b)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || !errors.Is(err, signer.ErrInvalidMessage) {
				t.Fatalf("error %v is not a *Error wrapping ErrInvalidMessage", err)
			}
			return
		}
		if m.Format == 0 {
			t.Fatal("accepted with no format")
		}
		for _, d := range []Format{TM2, CometBFT} {
			if m.Format&d == 0 {
				if _, err := ParseFormat(b, d); err == nil {
					t.Fatalf("ParseFormat(%v) accepts what Parse did not report", d)
				}
				continue
			}
			one := m
			one.Format = d
			got, err := one.Bytes()
			if err != nil || !bytes.Equal(got, b) {
				t.Fatalf("%v rebuild: %x, %v; want %x", d, got, err, b)
			}
			if m.Phase == VoteExtension {
				continue
			}
			again, err := one.WithTimestamp(m.Timestamp)
			if err != nil || !bytes.Equal(again, b) {
				t.Fatalf("%v WithTimestamp(same): %x, %v", d, again, err)
			}
			other, err := one.WithTimestamp(m.Timestamp.Add(time.Second))
			if err != nil {
				continue // out of range
			}
			om, err := ParseFormat(other, d)
			if err != nil || om.Height != m.Height || om.Round != m.Round || om.Phase != m.Phase || om.ChainID != m.ChainID {
				t.Fatalf("%v WithTimestamp(other): %+v, %v", d, om, err)
			}
		}
	})
}
