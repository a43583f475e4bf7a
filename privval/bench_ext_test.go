package privval

import (
	"context"
	"errors"
	"testing"
	"time"
)

// BenchmarkPrecommitExtension measures a CometBFT v0.38 precommit for a
// block with its vote extension, one request, as the validator sees it
// over a Unix socket: the key signs the two (an in-process Ed25519 key)
// and the guard writes the precommit's state, in memory or synced to a
// directory on disk. The remote-1ms row gives every key sign a 1 ms wait,
// as a key one round trip away (a threshold key's parties) has: there
// the two signs' overlap shows.
func BenchmarkPrecommitExtension(b *testing.B) {
	for _, row := range []struct {
		name    string
		durable bool
		delay   time.Duration
	}{{"memory", false, 0}, {"durable", true, 0}, {"remote-1ms", true, time.Millisecond}} {
		b.Run(row.name, func(b *testing.B) {
			key := newKey(7)
			key.SetDelay(row.delay)
			g := newGuard(b, key, row.durable)
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			defer func() {
				cancel()
				if err := <-done; !errors.Is(err, context.Canceled) {
					b.Error(err)
				}
			}()
			ln := listen(b, "unix")
			e, err := NewEndpoint(g, Config{Dialect: V038, Network: "unix", Address: ln.Addr().String(), ChainID: chainID})
			if err != nil {
				b.Fatal(err)
			}
			go func() { done <- e.Run(ctx) }()
			n := accept(b, ln, V038)
			call := func(h int64) {
				v := testVote(typePrecommit, h, 0, 1)
				v.Extension = []byte("app data")
				r, err := decodeResponse(must(n.roundTrip(encSignVoteRequest(v, chainID, V038))), V038)
				if err != nil || r.err != nil || r.vote == nil || r.vote.ExtensionSignature == nil {
					b.Fatalf("precommit: %v %+v", err, r.err)
				}
			}
			call(1)
			h := int64(1)
			for b.Loop() {
				h++
				call(h)
			}
		})
	}
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}
