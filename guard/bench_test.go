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
func BenchmarkSign(b *testing.B) {
	ctx := context.Background()
	run := func(b *testing.B, cfg Config) {
		key := newKey(12)
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
			if i == n {
				b.StopTimer()
				fill()
				i = 0
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
	b.Run("disk", func(b *testing.B) { run(b, Config{Dir: b.TempDir()}) })
	b.Run("memory", func(b *testing.B) { run(b, Config{FS: memFS{}}) })
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
