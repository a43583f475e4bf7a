package secretconn

import (
	"context"
	"io"
	"net"
	"testing"
)

func BenchmarkHandshake(b *testing.B) {
	for _, v := range variants {
		b.Run(v.String(), func(b *testing.B) {
			ka, kb := key(1), key(2)
			for i := 0; i < b.N; i++ {
				x, y := net.Pipe()
				ra, rb := both(context.Background(), x, y, ka, kb, v, v)
				if ra.err != nil || rb.err != nil {
					b.Fatal(ra.err, rb.err)
				}
				x.Close()
				y.Close()
			}
		})
	}
}

// BenchmarkRoundTrip is one request and one reply of a privval-sized
// message through both ends, over TCP loopback.
func BenchmarkRoundTrip(b *testing.B) {
	x, y := tcpPair(b)
	ra, rb := both(context.Background(), x, y, key(1), key(2), Merlin, Merlin)
	if ra.err != nil || rb.err != nil {
		b.Fatal(ra.err, rb.err)
	}
	defer ra.c.Close()
	defer rb.c.Close()
	msg := make([]byte, 200)
	go func() {
		buf := make([]byte, 200)
		for {
			if _, err := io.ReadFull(rb.c, buf); err != nil {
				return
			}
			if _, err := rb.c.Write(buf); err != nil {
				return
			}
		}
	}()
	buf := make([]byte, 200)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := ra.c.Write(msg); err != nil {
			b.Fatal(err)
		}
		if _, err := io.ReadFull(ra.c, buf); err != nil {
			b.Fatal(err)
		}
	}
}
