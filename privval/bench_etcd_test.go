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
// whose added-ms/op and etcd-ms/op (the transactions' time) read beside
// etcd-txn-bare, the same transaction (a value of the same size, through
// the same client) with no protocol, guard or key, measured in the same
// run on the same cluster. Without an etcd binary it is skipped.
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
				g, err := guard.New(key, guard.Config{Store: store(b), AutoInit: true})
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { g.Close() })
				runRoundTrip(b, key, g, proto, network)
			})
		}
	}
	b.Run("etcd-txn-bare", func(b *testing.B) {
		s := store(b)
		ctx := context.Background()
		key := newKey(4)
		sb := tm2Bytes(b, testVote(typePrevote, 1, 0, 1), chainID)
		sig, err := key.SignContext(ctx, sb)
		if err != nil {
			b.Fatal(err)
		}
		st := guard.State{ChainID: chainID, Height: 1, Step: 2, SignBytes: sb, Signature: sig}
		ver, err := s.Swap(ctx, chainID, 0, st)
		if err != nil {
			b.Fatal(err)
		}
		b.ResetTimer()
		start := time.Now()
		for i := 0; i < b.N; i++ {
			if ver, err = s.Swap(ctx, chainID, ver, st); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(time.Since(start))/float64(time.Millisecond)/float64(b.N), "txn-ms/op")
	})
}
