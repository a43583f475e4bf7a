package backoff

import (
	"context"
	"slices"
	"testing"
	"time"
)

func waits(b *Backoff, n int) []time.Duration {
	var out []time.Duration
	for range n {
		out = append(out, b.Next())
	}
	return out
}

func TestDoublesToMax(t *testing.T) {
	b := Backoff{Min: time.Millisecond, Max: 50 * time.Millisecond}
	ms := time.Millisecond
	want := []time.Duration{1 * ms, 2 * ms, 4 * ms, 8 * ms, 16 * ms, 32 * ms, 50 * ms, 50 * ms}
	if got := waits(&b, len(want)); !slices.Equal(got, want) {
		t.Fatalf("waits %v, want %v", got, want)
	}
	if b.Current() != 50*ms {
		t.Errorf("Current %v after reaching Max", b.Current())
	}
	b.Reset()
	if got := b.Next(); got != ms {
		t.Errorf("after Reset the wait is %v, want Min", got)
	}
	if b.Current() != 2*ms {
		t.Errorf("Current %v after one wait, want 2ms", b.Current())
	}
}

func TestFactor(t *testing.T) {
	b := Backoff{Min: 100 * time.Millisecond, Max: time.Second, Factor: 3}
	want := []time.Duration{100, 300, 900, 1000, 1000}
	for i := range want {
		want[i] *= time.Millisecond
	}
	if got := waits(&b, len(want)); !slices.Equal(got, want) {
		t.Fatalf("waits %v, want %v", got, want)
	}
}

func TestMaxBelowMin(t *testing.T) {
	b := Backoff{Min: time.Second, Max: time.Millisecond}
	if got := waits(&b, 3); !slices.Equal(got, []time.Duration{time.Second, time.Second, time.Second}) {
		t.Fatalf("waits %v, want Min each time", got)
	}
}

// Jitter keeps each wait between d×(1−Jitter) and d, and varies it.
func TestJitterBounds(t *testing.T) {
	seen := map[time.Duration]bool{}
	for range 1000 {
		b := Backoff{Min: 100 * time.Millisecond, Max: 30 * time.Second, Jitter: 0.5}
		for i, base := range []time.Duration{100, 200, 400, 800} {
			base *= time.Millisecond
			d := b.Next()
			if d < base/2 || d > base {
				t.Fatalf("wait %d is %v, want %v to %v", i, d, base/2, base)
			}
			if i == 0 {
				seen[d] = true
			}
		}
	}
	if len(seen) < 100 {
		t.Errorf("only %d distinct first waits in 1000: no jitter?", len(seen))
	}
}

// A huge factor or Max does not overflow.
func TestNoOverflow(t *testing.T) {
	b := Backoff{Min: time.Hour, Max: 1<<63 - 1, Factor: 1e9}
	for range 10 {
		if d := b.Next(); d < time.Hour {
			t.Fatalf("wait %v", d)
		}
	}
}

func TestSleepHonoursContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	b := Backoff{Min: time.Millisecond}
	if !b.Sleep(ctx) {
		t.Fatal("Sleep reported the context ended")
	}
	done := make(chan bool)
	go func() { done <- Sleep(ctx, time.Hour) }()
	cancel()
	select {
	case ok := <-done:
		if ok {
			t.Fatal("Sleep reported a full wait after cancel")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Sleep did not return when the context ended")
	}
	if Sleep(ctx, 0) {
		t.Fatal("Sleep on an ended context reported a full wait")
	}
}

func TestSleepUntilStop(t *testing.T) {
	stop := make(chan struct{})
	if !SleepUntil(context.Background(), stop, time.Millisecond) {
		t.Fatal("SleepUntil reported a stop before stop was closed")
	}
	done := make(chan bool)
	go func() { done <- SleepUntil(context.Background(), stop, time.Hour) }()
	close(stop)
	select {
	case ok := <-done:
		if ok {
			t.Fatal("SleepUntil reported a full wait after stop was closed")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("SleepUntil did not return when stop was closed")
	}
}
