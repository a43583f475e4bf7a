package main

import (
	"bytes"
	"context"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/signerkit/signerkit/openpgpcard/cardsim"
)

// TestVPCD plays vpcd: it listens, lets the command connect, asks for the
// ATR and sends SELECT, then closes the connection (pcscd stopping), and
// sees the command connect again.
func TestVPCD(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- runContext(ctx, []string{"-vpcd", l.Addr().String(), "-profile", "fst01"})
	}()
	for round := range 2 {
		l.(*net.TCPListener).SetDeadline(time.Now().Add(10 * time.Second))
		conn, err := l.Accept()
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		conn.SetDeadline(time.Now().Add(10 * time.Second))
		conn.Write(cardsim.AppendFrame(nil, []byte{0x01}))
		conn.Write(cardsim.AppendFrame(nil, []byte{0x04}))
		atr, err := cardsim.ReadFrame(conn)
		if err != nil || atr[0] != 0x3B {
			t.Fatalf("round %d: ATR %x, %v", round, atr, err)
		}
		conn.Write(cardsim.AppendFrame(nil, append([]byte{0x00, 0xA4, 0x04, 0x00, byte(len(cardsim.AID))}, cardsim.AID...)))
		resp, err := cardsim.ReadFrame(conn)
		if err != nil || !bytes.Equal(resp, []byte{0x90, 0x00}) {
			t.Fatalf("round %d: SELECT answered %x, %v", round, resp, err)
		}
		conn.Close()
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("cardsim exited with %v", err)
	}
}

func TestFlags(t *testing.T) {
	for _, args := range [][]string{{"-profile", "nope"}, {"-time", "soon"}, {"extra"}, {"-vpcd", "127.0.0.1:" + strconv.Itoa(cardsim.VPCDPort), "-bogus"}} {
		if err := run(args); err == nil {
			t.Errorf("%q: no error", args)
		}
	}
}
