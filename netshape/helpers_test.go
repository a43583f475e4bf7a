package netshape

import (
	"io"
	"net"
	"testing"

	"github.com/signerkit/signerkit/internal/benchtime"

	"go.uber.org/goleak"
)

// defaultBenchtime is how long each benchmark runs unless -benchtime is
// given: a round trip under the transatlantic profile takes 90 ms, and at
// go's default of 1 s a row this package alone would spend about a minute
// of `go test -bench=. ./...`. Pass -benchtime for figures to quote.
const defaultBenchtime = "100ms"

// defaultParallel is how many parallel tests run at once unless -parallel
// is given. Go's default, GOMAXPROCS, would run the conformance cases two
// at a time on a 2-core machine, though they spend nearly all their time
// waiting on deadlines, shaped delays and Close's Linger, not on a CPU.
// Not many more, though: BasicIO closes right after writing 1 MiB, and
// with 16 cases at once under -race on a loaded machine, delivering it
// once took longer than Linger allows.
const defaultParallel = 4

func TestMain(m *testing.M) {
	benchtime.Default(defaultBenchtime) // parses the command line
	benchtime.Parallel(defaultParallel)
	goleak.VerifyTestMain(m)
}

// tcpPair returns the two ends of a loopback TCP connection.
func tcpPair(t testing.TB) (client, server net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			accepted <- nil
			return
		}
		accepted <- c
	}()
	client, err = net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	server = <-accepted
	if server == nil {
		client.Close()
		t.Fatal("accept failed")
	}
	return client, server
}

// shapedPair returns a loopback TCP connection whose client end is wrapped
// with l; the server end is a plain socket.
func shapedPair(t testing.TB, l Link) (*Conn, net.Conn) {
	t.Helper()
	c, s := tcpPair(t)
	sc, err := Wrap(c, l)
	if err != nil {
		c.Close()
		s.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		sc.Close()
		s.Close()
	})
	return sc, s
}

// echo copies everything c reads back to it until EOF or an error.
func echo(c net.Conn) {
	io.Copy(c, c)
}
