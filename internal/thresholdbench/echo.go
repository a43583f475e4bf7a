package thresholdbench

import (
	"context"
	"io"
	"net"
	"slices"
	"testing"
	"time"

	"github.com/signerkit/signerkit/netshape"
)

// Echo is the floor the sign rows stand on: a 215-byte request and a
// 32-byte answer, one at a time, over a plain TCP connection shaped as the
// coordinator's link to the second-nearest party of n, the round trip a
// sign waits for. It reports p50-ms and
// p99-ms, so that the rows show how late the emulated network itself
// delivers on this machine, apart from anything FROST or TLS costs.
func Echo(b *testing.B, n Network) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		buf := make([]byte, 215)
		for {
			if _, err := io.ReadFull(c, buf); err != nil {
				return
			}
			if _, err := c.Write(buf[:32]); err != nil {
				return
			}
		}
	}()
	link := n.farLink()
	c, err := netshape.Dialer(link, nil)(context.Background(), "tcp", ln.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	req, resp := make([]byte, 215), make([]byte, 32)
	lat := make([]time.Duration, 0, b.N)
	for b.Loop() {
		t0 := time.Now()
		if _, err := c.Write(req); err != nil {
			b.Fatal(err)
		}
		if _, err := io.ReadFull(c, resp); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(t0))
	}
	slices.Sort(lat)
	l := Load{Latency: lat}
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	b.ReportMetric(ms(l.Percentile(0.5)), "p50-ms")
	b.ReportMetric(ms(l.Percentile(0.99)), "p99-ms")
	b.ReportMetric(ms(link.RTT()), "rtt-ms")
}

// farLink returns the coordinator's link to the second-nearest party: the
// one whose round trip is SignRTT.
func (n Network) farLink() netshape.Link {
	for id := 1; id <= 3; id++ {
		if l := n.Link(id); l.RTT() == n.SignRTT() {
			return l
		}
	}
	return n.Link(1)
}
