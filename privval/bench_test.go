package privval

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/signerkit/signerkit/guard"
	"github.com/signerkit/signerkit/signer/signertrace"
)

// BenchmarkRoundTrip measures a sign as the validator sees it: a node-side
// client sends a prevote at the next height and waits for the signed
// answer, over Unix and TCP, with an in-process Ed25519 key behind the
// guard. added-ms/op is the validator's view minus the backend's sign (as
// signertrace.Instrument times it), that is, framing, decoding, the guard, its
// state write and the sockets. The -durable rows keep the guard's state in
// a directory on disk and report its syncs (fsync/op, fsync-ms/op); the
// others keep it in memory. Rows are named as in the root table:
// privval-<protocol>-<tcp|unix>[-durable].
func BenchmarkRoundTrip(b *testing.B) {
	for _, proto := range []string{"v038", "native"} {
		for _, network := range []string{"unix", "tcp"} {
			for _, durable := range []bool{false, true} {
				name := "privval-" + proto + "-" + network
				if durable {
					name += "-durable"
				}
				b.Run(name, func(b *testing.B) { benchRoundTrip(b, proto, network, durable) })
			}
		}
	}
}

func benchRoundTrip(b *testing.B, proto, network string, durable bool) {
	key := signertrace.Instrument(newKey(4))
	runRoundTrip(b, key, newGuard(b, key, durable), proto, network)
}

// runRoundTrip is a BenchmarkRoundTrip row with g over key.
func runRoundTrip(b *testing.B, key *signertrace.Instrumented, g *guard.Guard, proto, network string) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	defer func() {
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			b.Error(err)
		}
	}()
	ln := listen(b, network)

	var call func(h int64)
	switch proto {
	case "v038":
		e, err := NewEndpoint(g, Config{Dialect: V038, Network: network, Address: ln.Addr().String(), ChainID: chainID})
		if err != nil {
			b.Fatal(err)
		}
		go func() { done <- e.Run(ctx) }()
		n := accept(b, ln, V038)
		call = func(h int64) {
			b, err := n.roundTrip(encSignVoteRequest(testVote(typePrevote, h, 0, 1), chainID, V038))
			if err != nil {
				panic(err)
			}
			if r, err := decodeResponse(b, V038); err != nil || r.err != nil {
				panic(r.err.Description)
			}
		}
	case "native":
		s, err := NewServer(g, ServerConfig{ChainID: chainID})
		if err != nil {
			b.Fatal(err)
		}
		go func() { done <- s.Serve(ctx, ln) }()
		n := dialNative(b, ln)
		call = func(h int64) {
			sb := tm2Bytes(b, testVote(typePrevote, h, 0, 1), chainID)
			if _, _, msg, isErr := n.call(encNativeSignRequest(sb)); isErr {
				panic(msg)
			}
		}
	}
	call(1) // connect, create the state file
	key.Reset()
	g0 := g.Stats()
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		call(int64(i + 2))
	}
	elapsed := time.Since(start)
	b.StopTimer()
	var backend time.Duration
	for _, l := range key.Snapshot().Labels {
		backend += l.Total
	}
	gs := g.Stats()
	n := float64(b.N)
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	b.ReportMetric(ms(elapsed-backend)/n, "added-ms/op")
	b.ReportMetric(ms(backend)/n, "backend-ms/op")
	b.ReportMetric(float64(gs.Syncs-g0.Syncs)/n, "fsync/op")
	b.ReportMetric(ms(gs.SyncTime-g0.SyncTime)/n, "fsync-ms/op")
}

// BenchmarkRequestWork is the part of a remote sign that is neither the
// sockets nor the key: for a v0.38 prevote at the next height, the
// signer's work (decode the frame, build the guard.Request, apply the
// guard's rules with its state in memory, encode and frame the answer,
// the request's deadline and label: Endpoint.serve without its read and
// write) and, apart, the validator's (encode the request, decode the
// answer, with this package's own test encoders). work-ms/op is the
// row's time minus the key's sign, timed around it. Read against the
// root table's raw-socket-* floor rows: floor + signer + validator work
// is the least any remote signer speaking the protocol can add.
func BenchmarkRequestWork(b *testing.B) {
	b.Run("signer", func(b *testing.B) {
		key := signertrace.Instrument(newKey(5))
		g := newGuard(b, key, false)
		e, err := NewEndpoint(g, Config{Dialect: V038, Network: "unix", Address: "unused", ChainID: chainID})
		if err != nil {
			b.Fatal(err)
		}
		frames := make([][]byte, 4096)
		k := len(frames)
		var msg, out []byte
		serve := func(frame []byte) {
			req, err := decodeRequest(frame, V038)
			if err != nil {
				b.Fatal(err)
			}
			info := RequestInfo{ChainID: req.chainID}
			info.Phase, info.Label = requestPhase(req)
			if err := e.serveOne(context.Background(), &info, func(ctx context.Context, info *RequestInfo) (error, error) {
				var refusal error
				msg, refusal = e.answer(ctx, req, info, msg[:0])
				out = appendFrame(out[:0], msg)
				return refusal, nil
			}); err != nil || info.Err != nil {
				b.Fatal(err, info.Err)
			}
		}
		h := int64(0)
		next := func() []byte {
			h++
			return encSignVoteRequest(testVote(typePrevote, h, 0, 1), chainID, V038)
		}
		serve(next())
		key.Reset()
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if k == len(frames) {
				b.StopTimer()
				for j := range frames {
					frames[j] = next()
				}
				k = 0
				b.StartTimer()
			}
			serve(frames[k])
			k++
		}
		elapsed := b.Elapsed() // the frames' encoding, timer stopped, left out
		b.StopTimer()
		var backend time.Duration
		for _, l := range key.Snapshot().Labels {
			backend += l.Total
		}
		b.ReportMetric(float64(elapsed-backend)/float64(time.Millisecond)/float64(b.N), "work-ms/op")
	})
	b.Run("validator", func(b *testing.B) {
		// One real answer, decoded again and again after its request is
		// encoded: the validator's side of one sign.
		key := newKey(6)
		g := newGuard(b, key, false)
		e, err := NewEndpoint(g, Config{Dialect: V038, Network: "unix", Address: "unused", ChainID: chainID})
		if err != nil {
			b.Fatal(err)
		}
		req, err := decodeRequest(encSignVoteRequest(testVote(typePrevote, 1, 0, 1), chainID, V038), V038)
		if err != nil {
			b.Fatal(err)
		}
		answer, refusal := e.answer(context.Background(), req, &RequestInfo{}, nil)
		if refusal != nil {
			b.Fatal(refusal)
		}
		b.ReportAllocs()
		b.ResetTimer()
		start := time.Now()
		for i := 0; i < b.N; i++ {
			_ = encSignVoteRequest(testVote(typePrevote, int64(i+2), 0, 1), chainID, V038)
			if r, err := decodeResponse(answer, V038); err != nil || r.err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(time.Since(start))/float64(time.Millisecond)/float64(b.N), "work-ms/op")
	})
}
