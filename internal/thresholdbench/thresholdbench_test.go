package thresholdbench

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/signerkit/signerkit/netshape"
)

func TestNetworks(t *testing.T) {
	want := map[string]time.Duration{
		"same-zone":     netshape.SameZoneRTT,
		"cross-europe":  netshape.CrossEuropeRTT,
		"transatlantic": netshape.TransatlanticRTT,
		"trio":          32500 * time.Microsecond, // Frankfurt to Gävle
	}
	got := Networks()
	if len(got) != len(want) {
		t.Fatalf("%d networks, want %d", len(got), len(want))
	}
	for _, n := range got {
		if rtt, ok := want[n.Name]; !ok || n.SignRTT() != rtt {
			t.Errorf("%s: SignRTT %v, want %v", n.Name, n.SignRTT(), rtt)
		}
	}
}

func TestMessageLength(t *testing.T) {
	for h := int64(FirstHeight); h < FirstHeight+100_000; h += 997 {
		if n := len(Message(h)); n != 108 {
			t.Fatalf("prevote at height %d is %d bytes, want 108", h, n)
		}
	}
}

// TestRunCounts signs on a same-zone fixture and checks the signatures and
// the byte counts against the wire format: a party is sent a handle (8),
// a count (1), the other signer's commitments (66) and the message, and
// answers with a 32-byte share.
func TestRunCounts(t *testing.T) {
	n, _ := NetworkNamed("same-zone")
	// Without hedging, every request is one share.
	f, err := Start(context.Background(), Config{Net: n, PoolSize: 64, HedgeAfter: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var height atomic.Int64
	height.Store(FirstHeight - 1)
	l := f.Run(context.Background(), 4, 40, 0, &height)
	if l.Errors > 0 || l.Signs != 40 {
		t.Fatalf("%d signs verified, %d errors (first: %v), want 40 and 0", l.Signs, l.Errors, l.FirstErr)
	}
	if len(l.Latency) != 40 || l.Percentile(0.5) < n.SignRTT() {
		t.Errorf("%d latencies, p50 %v: want 40, at least the round trip %v", len(l.Latency), l.Percentile(0.5), n.SignRTT())
	}
	tr := l.Traffic
	if tr.Shares != 80 || tr.Failures != 0 {
		t.Fatalf("%d shares and %d failures for 40 signs", tr.Shares, tr.Failures)
	}
	perShare := uint64(8 + 1 + 66 + 108 + 32)
	if tr.Payload != tr.Shares*perShare {
		t.Errorf("payload %d bytes for %d shares, want %d each", tr.Payload, tr.Shares, perShare)
	}
	if tr.TLS <= tr.Payload || tr.Wire <= tr.TLS {
		t.Errorf("payload %d, TLS %d, wire %d bytes: each should exceed the one before", tr.Payload, tr.TLS, tr.Wire)
	}
}

func TestDKGMesh(t *testing.T) {
	n, _ := NetworkNamed("same-zone")
	m, cleanup, err := connectMesh(context.Background(), n.Profile, n.Parties)
	if err != nil {
		t.Fatal(err)
	}
	defer cleanup()
	for range 2 {
		took, keys, pubs, err := m.run()
		if err != nil {
			t.Fatal(err)
		}
		if took < n.Profile.RTT(n.Parties[0], n.Parties[1]) {
			t.Errorf("a DKG took %v, less than a round trip", took)
		}
		if err := checkKeys(keys, pubs); err != nil {
			t.Fatal(err)
		}
	}
	// Each participant broadcasts a 131-byte round-1 package to two
	// others and sends a 36-byte share to each.
	if got, want := m.payload.Load(), uint64(2*6*(131+36)); got != want {
		t.Errorf("payload %d bytes for two DKGs, want %d", got, want)
	}
}

// TestStartBoundsTheWarmUp: Start once waited for the pools with no
// deadline but its context's, which the rows and the report give none, so
// a pool that never filled hung the run until the test binary's timeout.
// A pool that cannot fill (the parties' stores hold half of it) is now an
// error after Config.WarmTimeout, naming the parties and their pools.
func TestStartBoundsTheWarmUp(t *testing.T) {
	n, _ := NetworkNamed("same-zone")
	start := time.Now()
	f, err := Start(context.Background(), Config{Net: n, PoolSize: 64, NonceCapacity: 32, WarmTimeout: 2 * time.Second})
	if err == nil {
		f.Close()
		t.Fatal("Start filled pools of 64 from stores of 32")
	}
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "party 2 has 32 of 64 commitments") {
		t.Errorf("Start: %v; want a deadline naming each party and its pool", err)
	}
	if d := time.Since(start); d > time.Minute {
		t.Errorf("Start took %v with a warm-up bound of 2s", d)
	}
}
