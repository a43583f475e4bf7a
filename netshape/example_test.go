package netshape_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"net"
	"time"

	"github.com/signerkit/signerkit/netshape"
)

func Example() {
	// An echo server on loopback, in the United States.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		io.Copy(c, c)
	}()

	// A client in Europe: the profile shapes its connection at the
	// dialing end, so the server's socket stays a plain one.
	p := netshape.Transatlantic()
	dial := p.Dialer("europe", "us", nil)
	c, err := dial(context.Background(), "tcp", ln.Addr().String())
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	start := time.Now()
	c.Write([]byte("ping"))
	reply := make([]byte, 4)
	if _, err := io.ReadFull(c, reply); err != nil {
		log.Fatal(err)
	}
	took := time.Since(start)

	fmt.Printf("%s after at least %v: %v\n", reply, p.RTT("europe", "us"), took >= p.RTT("europe", "us"))
	st := c.(*netshape.Conn).Stats()
	fmt.Printf("sent %d bytes in %d segment, received %d\n", st.Out.Bytes, st.Out.Segments, st.In.Bytes)
	// Output:
	// ping after at least 90ms: true
	// sent 4 bytes in 1 segment, received 4
}
