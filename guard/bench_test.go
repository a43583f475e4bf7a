package guard

import (
	"context"
	"testing"
	"time"

	"github.com/signerkit/signerkit/signbytes"
)

// BenchmarkSign signs rising prevotes through the Guard over an in-process
// Ed25519 key. "disk" keeps the state in a directory under the test's temp
// dir (set TMPDIR to measure another disk); "memory" keeps it in memory,
// which isolates the guard's own cost; "key" is the key alone. fsync/op and
// fsync-ms/op are the state syncs per sign and their time, writes included.
//
// The "remote-1ms" rows sign on disk with a key that takes 1 ms, as a
// threshold group's round trip does, the record written after the key
// signs ("after") or while it signs (Config.WriteAhead, "ahead"); their
// "gap-2ms" versions pause 2 ms between signs (not timed), after which a
// sync costs what it costs between a validator's votes rather than back
// to back.
func BenchmarkSign(b *testing.B) {
	ctx := context.Background()
	run := func(b *testing.B, cfg Config, delay, gap time.Duration) {
		key := newKey(12)
		key.SetDelay(delay)
		g, err := New(key, cfg)
		if err != nil {
			b.Fatal(err)
		}
		defer g.Close()
		if err := g.Init(ctx, chainID, 1); err != nil {
			b.Fatal(err)
		}
		// Prebuilt messages keep the encoder out of the measurement.
		const n = 4096
		msgs := make([][]byte, n)
		ts := time.Unix(1777636800, 0)
		h := int64(0)
		fill := func() {
			for i := range msgs {
				h++
				msgs[i] = msg(b, signbytes.CometBFT, chainID, signbytes.Prevote, h, 0, 1, ts)
			}
		}
		fill()
		before := g.Stats()
		b.ReportAllocs()
		b.ResetTimer()
		i, ops := 0, 0
		for b.Loop() {
			if i == n || gap > 0 {
				b.StopTimer()
				if i == n {
					fill()
					i = 0
				}
				time.Sleep(gap)
				b.StartTimer()
			}
			if _, err := g.SignContext(ctx, msgs[i]); err != nil {
				b.Fatal(err)
			}
			i++
			ops++
		}
		st := g.Stats()
		b.ReportMetric(float64(st.Syncs-before.Syncs)/float64(ops), "fsync/op")
		b.ReportMetric(float64(st.SyncTime-before.SyncTime)/1e6/float64(ops), "fsync-ms/op")
	}
	b.Run("disk", func(b *testing.B) { run(b, Config{Dir: b.TempDir()}, 0, 0) })
	b.Run("memory", func(b *testing.B) { run(b, Config{FS: memFS{}}, 0, 0) })
	for _, gap := range []time.Duration{0, 2 * time.Millisecond} {
		name := "remote-1ms"
		if gap > 0 {
			name += "-gap-2ms"
		}
		for _, ahead := range []bool{false, true} {
			b.Run(name+map[bool]string{false: "/after", true: "/ahead"}[ahead], func(b *testing.B) {
				run(b, Config{Dir: b.TempDir(), WriteAhead: ahead}, time.Millisecond, gap)
			})
		}
	}
	b.Run("key", func(b *testing.B) {
		key := newKey(12)
		m := msg(b, signbytes.CometBFT, chainID, signbytes.Prevote, 1, 0, 1, time.Unix(1777636800, 0))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := key.SignContext(ctx, m); err != nil {
				b.Fatal(err)
			}
		}
	})
}
