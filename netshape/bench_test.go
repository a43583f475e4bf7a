package netshape

import (
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// pairs returns the host pairs of p to measure: each pair of the hosts it
// places, or two unnamed hosts.
func pairs(p *Profile) [][2]string {
	hosts := p.Hosts()
	if len(hosts) == 0 {
		return [][2]string{{"a", "b"}}
	}
	var out [][2]string
	for i, a := range hosts {
		for _, b := range hosts[i+1:] {
			out = append(out, [2]string{a, b})
		}
	}
	return out
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// reportLatency reports the mean and median of lat and the configured RTT.
func reportLatency(b *testing.B, lat []time.Duration, rtt time.Duration) {
	if len(lat) == 0 {
		return
	}
	slices.Sort(lat)
	var sum time.Duration
	for _, d := range lat {
		sum += d
	}
	b.ReportMetric(ms(sum/time.Duration(len(lat))), "rtt-ms")
	b.ReportMetric(ms(lat[len(lat)/2]), "p50-ms")
	b.ReportMetric(ms(rtt), "want-rtt-ms")
}

// BenchmarkRTT measures an echo's round trip over a connection shaped by
// each profile, against the profile's configured RTT: the shaper's
// accuracy, loopback and scheduling included.
func BenchmarkRTT(b *testing.B) {
	for _, p := range Profiles() {
		for _, pair := range pairs(p) {
			name := p.Name
			if len(p.Hosts()) > 0 {
				name += "/" + pair[0] + "-" + pair[1]
			}
			b.Run(name, func(b *testing.B) {
				l := p.Link(pair[0], pair[1])
				c, s := shapedPair(b, l)
				go echo(s)
				msg, got := make([]byte, 64), make([]byte, 64)
				var lat []time.Duration
				b.ReportAllocs()
				for b.Loop() {
					start := time.Now()
					if _, err := c.Write(msg); err != nil {
						b.Fatal(err)
					}
					if _, err := io.ReadFull(c, got); err != nil {
						b.Fatal(err)
					}
					lat = append(lat, time.Since(start))
				}
				reportLatency(b, lat, l.RTT())
			})
		}
	}
}

// BenchmarkInFlight runs requests of 128 bytes from n goroutines at once
// over one connection shaped by each profile (its first pair), to an echo
// server, and reports their latency: the shape of the threshold signing
// benchmarks at 1, 50, 100 and 200 in flight.
func BenchmarkInFlight(b *testing.B) {
	for _, p := range Profiles() {
		pair := pairs(p)[0]
		for _, n := range []int{1, 50, 100, 200} {
			b.Run(fmt.Sprintf("%s/%d", p.Name, n), func(b *testing.B) {
				l := p.Link(pair[0], pair[1])
				c, s := shapedPair(b, l)
				go echo(s)
				benchInFlight(b, c, n, l.RTT())
			})
		}
	}
}

// benchInFlight keeps n requests in flight over c, from n goroutines, and
// counts each completed request as one operation. It runs them under
// b.Loop, in one call, rather than in calls of growing b.N: each such call
// would wait a round trip or more whatever its b.N, and at 90 ms a round
// trip the ramp to a benchtime of 100 ms took a second or two a row. What
// is timed is the same: requests completed with n in flight, and the
// latency of each, from before its Write to its reply.
func benchInFlight(b *testing.B, c net.Conn, n int, rtt time.Duration) {
	const size = 128
	replies := make([]chan struct{}, n)
	for i := range replies {
		replies[i] = make(chan struct{}, 1)
	}
	go func() {
		buf := make([]byte, size)
		for {
			if _, err := io.ReadFull(c, buf); err != nil {
				return
			}
			replies[binary.BigEndian.Uint32(buf)] <- struct{}{}
		}
	}()
	var (
		mu       sync.Mutex // whole requests, one Write each
		stop     atomic.Bool
		wg       sync.WaitGroup
		begin    = make(chan struct{})
		done     = make(chan time.Duration, n) // each completed request's latency
		failed   = make(chan struct{})
		failOnce sync.Once
	)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req := make([]byte, size)
			binary.BigEndian.PutUint32(req, uint32(i))
			<-begin
			for !stop.Load() {
				start := time.Now()
				mu.Lock()
				_, err := c.Write(req)
				mu.Unlock()
				if err != nil {
					b.Error(err)
					failOnce.Do(func() { close(failed) })
					return
				}
				<-replies[i]
				done <- time.Since(start)
			}
		}()
	}
	var lat []time.Duration
	b.ReportAllocs()
	started := false
loop:
	for b.Loop() {
		if !started {
			close(begin) // the timer runs from here: b.Loop reset it
			started = true
		}
		select {
		case d := <-done:
			lat = append(lat, d)
		case <-failed:
			break loop
		}
	}
	// Let the requests still in flight finish, untimed and uncounted.
	stop.Store(true)
	if !started {
		close(begin)
	}
	go func() { wg.Wait(); close(done) }()
	for range done {
	}
	reportLatency(b, lat, rtt)
	b.ReportMetric(float64(len(lat))/b.Elapsed().Seconds(), "req/s")
}

// BenchmarkThroughput copies 1 MiB one way per operation over a plain
// loopback socket and over one wrapped with a zero Link, for the wrapper's
// own cost.
func BenchmarkThroughput(b *testing.B) {
	const size = 1 << 20
	for _, wrapped := range []bool{false, true} {
		name := "plain"
		if wrapped {
			name = "zero-link"
		}
		b.Run(name, func(b *testing.B) {
			var c net.Conn
			var s net.Conn
			if wrapped {
				c, s = shapedPair(b, Link{})
			} else {
				c, s = tcpPair(b)
				b.Cleanup(func() { c.Close(); s.Close() })
			}
			done := make(chan error, 1)
			go func() {
				_, err := io.Copy(io.Discard, s)
				done <- err
			}()
			buf := make([]byte, 64<<10)
			b.SetBytes(size)
			b.ReportAllocs()
			for b.Loop() {
				for sent := 0; sent < size; sent += len(buf) {
					if _, err := c.Write(buf); err != nil {
						b.Fatal(err)
					}
				}
			}
			c.Close()
			<-done
		})
	}
}
