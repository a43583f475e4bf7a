package netshape

import (
	"testing"
	"time"
)

// The shaper is the model: these tests check its arithmetic exactly, on
// made-up times, without waiting.

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func TestPlanDelay(t *testing.T) {
	s := newShaper(Path{Delay: 10 * time.Millisecond}, Link{}, 1)
	spans, tl := s.plan(t0, 5000, nil)
	if len(spans) != 1 || spans[0].n != 5000 || !spans[0].due.Equal(t0.Add(10*time.Millisecond)) {
		t.Fatalf("spans = %+v", spans)
	}
	if tl.segments != 4 { // 5000 bytes of at most 1448
		t.Errorf("segments = %d, want 4", tl.segments)
	}
	// Bytes entering earlier than bytes already scheduled still follow
	// them: in order.
	spans, _ = s.plan(t0.Add(-time.Second), 1, nil)
	if !spans[0].due.Equal(t0.Add(10 * time.Millisecond)) {
		t.Errorf("earlier bytes due %v, before the bytes ahead of them", spans[0].due.Sub(t0))
	}
}

func TestPlanBandwidth(t *testing.T) {
	// 1000-byte segments at 1 MB/s: each takes 1 ms to serialize.
	s := newShaper(Path{Delay: 5 * time.Millisecond, Bandwidth: 1e6}, Link{MSS: 1000}, 1)
	spans, _ := s.plan(t0, 3000, nil)
	if len(spans) != 3 {
		t.Fatalf("spans = %+v", spans)
	}
	for i, sp := range spans {
		want := t0.Add(time.Duration(i+1)*time.Millisecond + 5*time.Millisecond)
		if sp.n != 1000 || !sp.due.Equal(want) {
			t.Errorf("span %d = %d bytes at %v, want 1000 at %v", i, sp.n, sp.due.Sub(t0), want.Sub(t0))
		}
	}
	// A write entering while the link is still busy queues behind it.
	spans, _ = s.plan(t0.Add(time.Millisecond), 500, nil)
	if want := t0.Add(3500*time.Microsecond + 5*time.Millisecond); !spans[0].due.Equal(want) {
		t.Errorf("queued write due %v, want %v", spans[0].due.Sub(t0), want.Sub(t0))
	}
	// Once the link is idle, serialization starts when the bytes enter.
	spans, _ = s.plan(t0.Add(time.Second), 1000, nil)
	if want := t0.Add(time.Second + 6*time.Millisecond); !spans[0].due.Equal(want) {
		t.Errorf("idle write due %v, want %v", spans[0].due.Sub(t0), want.Sub(t0))
	}
}

func TestPlanJitter(t *testing.T) {
	const delay, jitter = 10 * time.Millisecond, 4 * time.Millisecond
	s := newShaper(Path{Delay: delay, Jitter: jitter}, Link{MSS: 100}, 3)
	// One large write: every segment within [delay, delay+jitter] and in
	// order.
	spans, _ := s.plan(t0, 100000, nil)
	var prev time.Time
	for _, sp := range spans {
		d := sp.due.Sub(t0)
		if d < delay || d > delay+jitter {
			t.Fatalf("due %v outside [%v, %v]", d, delay, delay+jitter)
		}
		if sp.due.Before(prev) {
			t.Fatalf("due %v before the previous span's %v: out of order", d, prev.Sub(t0))
		}
		prev = sp.due
	}
	// Writes far apart wait for nothing ahead of them: their delays are
	// the draws themselves, uniform over [delay, delay+jitter].
	low := 0
	for i := range 1000 {
		at := t0.Add(time.Duration(i+1) * time.Hour)
		spans, _ := s.plan(at, 1, nil)
		d := spans[0].due.Sub(at)
		if d < delay || d > delay+jitter {
			t.Fatalf("due %v outside [%v, %v]", d, delay, delay+jitter)
		}
		if d < delay+jitter/2 {
			low++
		}
	}
	if low < 400 || low > 600 {
		t.Errorf("%d of 1000 delays in the lower half of the jitter, want about 500", low)
	}
}

func TestPlanLoss(t *testing.T) {
	const delay, rto = 10 * time.Millisecond, 100 * time.Millisecond
	s := newShaper(Path{Delay: delay, Loss: 0.3, Retransmit: rto}, Link{MSS: 100}, 5)
	var lost, total int64
	for i := range 1000 {
		at := t0.Add(time.Duration(i) * time.Hour) // far apart: no head-of-line wait
		spans, tl := s.plan(at, 100, nil)
		total += tl.segments
		lost += tl.retransmits
		// k losses of the segment cost rto·(2^k − 1) more.
		want := at.Add(delay + rto*time.Duration(1<<tl.retransmits-1))
		if !spans[0].due.Equal(want) {
			t.Fatalf("segment %d with %d retransmits due %v after it entered, want %v",
				i, tl.retransmits, spans[0].due.Sub(at), want.Sub(at))
		}
		if tl.retransmitted != 100*tl.retransmits {
			t.Fatalf("retransmitted bytes %d for %d retransmits", tl.retransmitted, tl.retransmits)
		}
	}
	// Expected retransmits per segment is p/(1−p) ≈ 0.43; allow a wide
	// margin for the draw.
	if lost < total/5 || lost > total {
		t.Errorf("%d retransmits for %d segments at 30%% loss", lost, total)
	}
}

// TestPlanLongest: the longest times a valid Path takes, with every
// retransmission lost, add up to a due time later than the segment's
// entry by exactly their sum: nothing overflows. Both the largest
// Retransmit and the default one of the longest delays (capped) are
// tried.
func TestPlanLongest(t *testing.T) {
	const loss = 1 - 1e-12 // loses all maxRetransmits draws, for this seed
	for _, l := range []Link{
		{Out: Path{Delay: MaxDelay, Jitter: MaxJitter, Loss: loss, Retransmit: MaxRTO}},
		{Out: Path{Delay: MaxDelay, Jitter: MaxJitter, Loss: loss}, In: Path{Delay: MaxDelay}},
	} {
		if err := l.Validate(); err != nil {
			t.Fatal(err)
		}
		s := newShaper(l.Out, l, 1)
		if s.rto != MaxRTO {
			t.Errorf("RTO %v, want MaxRTO", s.rto)
		}
		spans, tl := s.plan(t0, 100, nil)
		if tl.retransmits != maxRetransmits {
			t.Fatalf("%d retransmits, want %d", tl.retransmits, maxRetransmits)
		}
		want := MaxDelay + MaxRTO*(1<<maxRetransmits-1)
		if got := spans[0].due.Sub(t0); got < want || got > want+MaxJitter {
			t.Errorf("due %v after entry, want %v plus at most %v of jitter", got, want, MaxJitter)
		}
	}
}

func TestDefaultRetransmit(t *testing.T) {
	l := Link{Out: Path{Delay: 20 * time.Millisecond, Loss: 0.1}, In: Path{Delay: 30 * time.Millisecond}}
	if s := newShaper(l.Out, l, 1); s.rto != 50*time.Millisecond+MinRTO {
		t.Errorf("default RTO = %v, want RTT + MinRTO = %v", s.rto, 50*time.Millisecond+MinRTO)
	}
	l = Link{Out: Path{Delay: 30 * time.Second, Loss: 0.1}, In: Path{Delay: 30 * time.Second}}
	if s := newShaper(l.Out, l, 1); s.rto != MaxRTO {
		t.Errorf("default RTO of a %v round trip = %v, want MaxRTO", l.RTT(), s.rto)
	}
}

func TestSerialization(t *testing.T) {
	for _, tc := range []struct {
		size int
		bw   int64
		want time.Duration
	}{
		{1000, 1e6, time.Millisecond},
		{1, 3, 333333334 * time.Nanosecond}, // rounded up
		{1448, 125e6, 11584 * time.Nanosecond},
	} {
		if got := serialization(tc.size, tc.bw); got != tc.want {
			t.Errorf("serialization(%d, %d) = %v, want %v", tc.size, tc.bw, got, tc.want)
		}
	}
}
