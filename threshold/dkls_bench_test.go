package threshold

import (
	"context"
	"testing"
)

// BenchmarkDKLS23Sign: the DKLS23 coordinator signing with party 2 over
// mutual TLS on loopback, one sign at a time. pooled takes a presignature
// made before the clock (one round trip per sign); cold makes it during
// the sign (presign's two round trips and its computation, then the
// sign's). payload-B/op is the bytes both ways on the party's
// connections. rtt is the baseline: a sign request for an unknown
// presignature, which the party refuses at once (a TLS round trip on the
// same connection, no computation).
func BenchmarkDKLS23Sign(b *testing.B) {
	f := dklsSetup(b)
	f.max = 1 << 20 // room for every presignature made before the clock
	f.start(b, 2)
	msg := []byte("gno sign bytes, about as long as a bank send's: 0123456789abcdef0123456789abcdef")
	b.Run("rtt", func(b *testing.B) {
		s := f.signer(b, -1, 2)
		ctx := context.Background()
		cc, err := s.members[0].r.conn(ctx, 0)
		if err != nil {
			b.Fatal(err)
		}
		req := make([]byte, dklsIDSize+32)
		b.ResetTimer()
		for range b.N {
			if _, err := cc.roundTrip(ctx, typeDKLSSign, req); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, name := range []string{"pooled", "cold"} {
		b.Run(name, func(b *testing.B) {
			s := f.signer(b, -1, 2)
			ctx := context.Background()
			if _, err := s.SignContext(ctx, msg); err != nil { // dial first
				b.Fatal(err)
			}
			if name == "pooled" {
				if _, err := s.Presign(ctx, 2, b.N); err != nil {
					b.Fatal(err)
				}
			}
			s0, p0 := s.Counters(2)
			b.ResetTimer()
			for range b.N {
				if _, err := s.SignContext(ctx, msg); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			s1, p1 := s.Counters(2)
			bytes := s1.PayloadIn + s1.PayloadOut - s0.PayloadIn - s0.PayloadOut
			if name == "cold" {
				bytes += p1.PayloadIn + p1.PayloadOut - p0.PayloadIn - p0.PayloadOut
			}
			b.ReportMetric(float64(bytes)/float64(b.N), "payload-B/op")
		})
	}
}
