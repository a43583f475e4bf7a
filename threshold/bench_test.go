package threshold_test

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"slices"
	"sync"
	"testing"

	"github.com/signerkit/signerkit/threshold"
	"github.com/signerkit/signerkit/threshold/frost"
	"github.com/signerkit/signerkit/threshold/thresholdtest"
)

// BenchmarkSign signs 128-byte messages over loopback TLS, one at a time
// and in parallel, with three remote parties and with a local share, and
// reports the sign connections' payload and wire bytes per remote share.
func BenchmarkSign(b *testing.B) {
	for _, mode := range []struct {
		name  string
		local bool
	}{{"remote", false}, {"local", true}} {
		b.Run(mode.name, func(b *testing.B) {
			c, err := thresholdtest.Start(thresholdtest.Options{Local: mode.local})
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			s, err := threshold.New(c.Config)
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			msg := make([]byte, 128)
			ctx := context.Background()
			for range 50 {
				if _, err := s.SignContext(ctx, msg); err != nil {
					b.Fatal(err)
				}
			}
			before := s.Stats()
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := s.SignContext(ctx, msg); err != nil {
						b.Error(err)
						return
					}
				}
			})
			var payload, wire, shares uint64
			for i, p := range s.Stats() {
				if p.Local {
					continue
				}
				o := before[i]
				payload += p.Sign.PayloadIn + p.Sign.PayloadOut - o.Sign.PayloadIn - o.Sign.PayloadOut
				wire += p.Sign.WireIn + p.Sign.WireOut - o.Sign.WireIn - o.Sign.WireOut
				shares += p.Shares - o.Shares
			}
			if shares > 0 {
				b.ReportMetric(float64(payload)/float64(shares), "payload-B/share")
				b.ReportMetric(float64(wire)/float64(shares), "wire-B/share")
			}
		})
	}
}

// BenchmarkNetworkDKG is a 2-of-3 key generation among three participants
// over loopback mutual TLS (certificates made outside the timed loop).
func BenchmarkNetworkDKG(b *testing.B) {
	ca, err := thresholdtest.NewCA()
	if err != nil {
		b.Fatal(err)
	}
	var certs []tls.Certificate
	for i := 1; i <= 3; i++ {
		c, err := ca.PeerCert(fmt.Sprintf("party-%d", i))
		if err != nil {
			b.Fatal(err)
		}
		certs = append(certs, c)
	}
	for b.Loop() {
		ls := make([]net.Listener, 3)
		var remotes []threshold.Remote
		for i := range ls {
			ls[i], _ = net.Listen("tcp", "127.0.0.1:0")
			remotes = append(remotes, threshold.Remote{ID: frost.Identifier(i + 1), Addr: ls[i].Addr().String(), ServerName: fmt.Sprintf("party-%d", i+1)})
		}
		var wg sync.WaitGroup
		for i := range 3 {
			peers := slices.Delete(slices.Clone(remotes), i, i+1)
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, _, err := threshold.RunDKG(context.Background(), threshold.DKGConfig{ID: frost.Identifier(i + 1), T: 2, N: 3, Ceremony: []byte("bench"),
					Peers: peers, Listener: ls[i], TLS: &tls.Config{Certificates: []tls.Certificate{certs[i]}, RootCAs: ca.Pool()}})
				if err != nil {
					b.Error(err)
				}
			}()
		}
		wg.Wait()
	}
}
