package threshold

import (
	"context"
	"net"
	"sync/atomic"
	"testing"
	"time"
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

// BenchmarkDKLS23SignHiccups: parties 2 and 3 each pause 100 ms in
// every 400 ms, the one 200 ms after the other (a party up but now and
// then stalled: a GC pause, a busy host; its answers wait the pause
// out), pooled signs one at a time, one every 7 ms (a steady signer, so
// that a run spans many pauses: ns/op is that pacing; read sign-µs, the
// mean time a sign took). unhedged waits a pause out; hedged-5ms asks
// the other party after 5 ms; adaptive after three times the party's
// mean round trip, at least 20 ms. hedges/op is the signs a hedge
// answered first, per sign.
func BenchmarkDKLS23SignHiccups(b *testing.B) {
	f := dklsSetup(b)
	f.max = 1 << 20
	start := time.Now()
	f.wrap = map[int]func(net.Listener) net.Listener{}
	for _, id := range []int{2, 3} {
		h := &hiccups{start: start, offset: time.Duration(id-2) * 200 * time.Millisecond}
		f.wrap[id] = func(l net.Listener) net.Listener { return &waitListener{Listener: l, wait: h.wait} }
	}
	f.start(b, 2)
	f.start(b, 3)
	msg := []byte("gno sign bytes, about as long as a bank send's: 0123456789abcdef0123456789abcdef")
	for _, row := range []struct {
		name  string
		hedge time.Duration
	}{{"unhedged", -1}, {"hedged-5ms", 5 * time.Millisecond}, {"adaptive", 0}} {
		b.Run(row.name, func(b *testing.B) {
			hiccupsOn.Store(false)
			f.hedge, f.timeout = row.hedge, 10*time.Second
			s := f.signer(b, -1)
			ctx := context.Background()
			for _, id := range []int{2, 3} {
				if _, err := s.Presign(ctx, id, b.N+1); err != nil {
					b.Fatal(err)
				}
				if _, err := s.members[id-2].r.conn(ctx, 0); err != nil {
					b.Fatal(err)
				}
			}
			hiccupsOn.Store(true)
			defer hiccupsOn.Store(false)
			b.ResetTimer()
			var took time.Duration
			next := time.Now()
			for range b.N {
				time.Sleep(time.Until(next))
				next = next.Add(7 * time.Millisecond)
				t0 := time.Now()
				if _, err := s.SignContext(ctx, msg); err != nil {
					b.Fatal(err)
				}
				took += time.Since(t0)
			}
			b.StopTimer()
			b.ReportMetric(float64(took.Microseconds())/float64(b.N), "sign-µs")
			var overtaken uint64
			for _, st := range s.Stats() {
				overtaken += st.Overtaken
			}
			b.ReportMetric(float64(overtaken)/float64(b.N), "hedges/op")
		})
	}
}

// hiccupsOn turns the hiccupListeners' pauses on.
var hiccupsOn atomic.Bool

// hiccups is a party's pauses: 100 ms in every 400 ms from start+offset.
type hiccups struct {
	start  time.Time
	offset time.Duration
}

// wait sleeps out the pause the party is in, if any.
func (h *hiccups) wait(<-chan struct{}) {
	const period, pause = 400 * time.Millisecond, 100 * time.Millisecond
	if !hiccupsOn.Load() {
		return
	}
	phase := (time.Since(h.start) - h.offset + period) % period
	if phase < pause {
		time.Sleep(pause - phase)
	}
}
