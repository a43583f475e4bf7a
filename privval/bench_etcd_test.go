package privval

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/signerkit/signerkit/guard"
	"github.com/signerkit/signerkit/guard/etcdstore"
	"github.com/signerkit/signerkit/guard/etcdstore/etcdtest"
	"github.com/signerkit/signerkit/signer/signertrace"
)

// BenchmarkRoundTripEtcd is BenchmarkRoundTrip with the guard's state in a
// real 3-member etcd cluster on loopback (TLS, client certificates), one
// compare-and-swap transaction per sign: rows privval-<protocol>-<tcp|unix>-etcd,
// whose added-ms/op and fsync-ms/op (here the transactions' time) read
// beside bare-txn-ms/op: as many bare transactions of the same size
// (a prevote's state, through the same client, no protocol, guard or key)
// timed right after the row on the same cluster. etcd-txn-bare is that
// alone. Without an etcd binary it is skipped.
func BenchmarkRoundTripEtcd(b *testing.B) {
	c := etcdtest.Start(b, 3)
	runs := 0 // each run of a row starts a fresh state
	store := func(b *testing.B) *etcdstore.Store {
		tlsCfg, err := etcdstore.TLSFiles(c.PKI.CA, c.PKI.ClientCert, c.PKI.ClientKey)
		if err != nil {
			b.Fatal(err)
		}
		s, err := etcdstore.New(etcdstore.Config{Endpoints: c.Endpoints(), Prefix: fmt.Sprintf("/bench/%d", runs), TLS: tlsCfg})
		if err != nil {
			b.Fatal(err)
		}
		runs++
		b.Cleanup(func() { s.Close() })
		return s
	}
	for _, proto := range []string{"v038", "native"} {
		for _, network := range []string{"unix", "tcp"} {
			b.Run("privval-"+proto+"-"+network+"-etcd", func(b *testing.B) {
				key := signertrace.Instrument(newKey(4))
				st := store(b)
				g, err := guard.New(key, guard.Config{Store: st, AutoInit: true})
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { g.Close() })
				runRoundTrip(b, key, g, proto, network)
				// The same number of bare transactions right after, on
				// the same cluster and client, timer stopped.
				b.ReportMetric(bareTxns(b, st, b.N), "bare-txn-ms/op")
			})
		}
	}
	b.Run("etcd-txn-bare", func(b *testing.B) {
		ms := bareTxns(b, store(b), b.N)
		b.ReportMetric(ms, "txn-ms/op")
	})
}

// bareTxns runs n compare-and-swap transactions of a prevote's state
// through s, each on the version the last one made, and returns their
// mean in milliseconds.
func bareTxns(b *testing.B, s *etcdstore.Store, n int) float64 {
	ctx := context.Background()
	const bare = "bare-chain"
	sb := tm2Bytes(b, testVote(typePrevote, 1, 0, 1), bare)
	sig, err := newKey(4).SignContext(ctx, sb)
	if err != nil {
		b.Fatal(err)
	}
	st := guard.State{ChainID: bare, Height: 1, Step: 2, SignBytes: sb, Signature: sig}
	ver, err := s.Swap(ctx, bare, 0, st)
	if err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	for range n {
		if ver, err = s.Swap(ctx, bare, ver, st); err != nil {
			b.Fatal(err)
		}
	}
	return float64(time.Since(start)) / float64(time.Millisecond) / float64(n)
}
