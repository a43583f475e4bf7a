package netshape

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math"
	"math/rand/v2"
	"net"
	"sync"
	"testing"
	"time"
)

// roundTrip writes msg on c and reads the echo, returning how long it took.
func roundTrip(t *testing.T, c net.Conn, msg []byte) time.Duration {
	t.Helper()
	start := time.Now()
	if _, err := c.Write(msg); err != nil {
		t.Fatalf("write: %v", err)
	}
	got := make([]byte, len(msg))
	if _, err := io.ReadFull(c, got); err != nil {
		t.Fatalf("read: %v", err)
	}
	took := time.Since(start)
	if !bytes.Equal(got, msg) {
		t.Fatalf("echo = %q, want %q", got, msg)
	}
	return took
}

// TestEchoLowerBound: with 20 ms each way an echo's round trip takes at
// least 40 ms, whichever end is shaped, and split across both ends.
func TestEchoLowerBound(t *testing.T) {
	t.Parallel()
	const oneWay = 20 * time.Millisecond
	full := Link{Out: Path{Delay: oneWay}, In: Path{Delay: oneWay}}
	half := Link{Out: Path{Delay: oneWay / 2}, In: Path{Delay: oneWay / 2}}
	for _, tc := range []struct {
		name           string
		client, server *Link
	}{
		{"client", &full, nil},
		{"server", nil, &full},
		{"both", &half, &half},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, s := tcpPair(t)
			var err error
			if tc.client != nil {
				if c, err = Wrap(c, *tc.client); err != nil {
					t.Fatal(err)
				}
			}
			if tc.server != nil {
				if s, err = Wrap(s, tc.server.Reverse()); err != nil {
					t.Fatal(err)
				}
			}
			defer c.Close()
			go func() { echo(s); s.Close() }()
			for i := range 5 {
				if took := roundTrip(t, c, []byte("ping")); took < 2*oneWay {
					t.Errorf("round trip %d took %v, less than %v", i, took, 2*oneWay)
				}
			}
		})
	}
}

// TestBandwidthLowerBound: 256 KiB through 1 MiB/s takes at least 250 ms
// (the serialization of everything but the first segment, since each
// segment is delivered once serialized), and arrives whole and in order.
func TestBandwidthLowerBound(t *testing.T) {
	t.Parallel()
	const size, bw = 256 << 10, 1 << 20
	c, s := shapedPair(t, Link{Out: Path{Bandwidth: bw}})
	data := make([]byte, size)
	for i := range data {
		data[i] = byte(i * 7)
	}
	got := make(chan []byte, 1)
	go func() {
		b, _ := io.ReadAll(io.LimitReader(s, size))
		got <- b
	}()
	start := time.Now()
	if _, err := c.Write(data); err != nil {
		t.Fatal(err)
	}
	b := <-got
	took := time.Since(start)
	if !bytes.Equal(b, data) {
		t.Fatalf("received %d bytes, not what was sent", len(b))
	}
	if min := time.Duration(size) * time.Second / bw; took < min {
		t.Errorf("%d bytes at %d B/s took %v, less than %v", size, bw, took, min)
	}
}

// TestLossKeepsEveryByte: under heavy loss, jitter and a bandwidth cap in
// both directions, every byte written is echoed back, in order, and the
// retransmissions are counted.
func TestLossKeepsEveryByte(t *testing.T) {
	t.Parallel()
	p := Path{Delay: 500 * time.Microsecond, Jitter: time.Millisecond, Bandwidth: 64 << 20, Loss: 0.2, Retransmit: 2 * time.Millisecond}
	c, s := shapedPair(t, Link{Out: p, In: p, Seed: 7, Buffer: 256 << 10})
	go echo(s)

	rng := rand.New(rand.NewPCG(1, 2))
	data := make([]byte, 2<<20)
	for i := range data {
		data[i] = byte(rng.Uint32())
	}
	got := make(chan []byte, 1)
	go func() {
		b, _ := io.ReadAll(io.LimitReader(c, int64(len(data))))
		got <- b
	}()
	for off := 0; off < len(data); {
		n := min(1+rng.IntN(20000), len(data)-off)
		if _, err := c.Write(data[off : off+n]); err != nil {
			t.Fatal(err)
		}
		off += n
	}
	if b := <-got; !bytes.Equal(b, data) {
		t.Fatalf("echo of %d bytes differs (got %d)", len(data), len(b))
	}
	st := c.Stats()
	if st.Out.Bytes != int64(len(data)) || st.In.Bytes != int64(len(data)) {
		t.Errorf("Stats bytes = out %d, in %d, want %d each", st.Out.Bytes, st.In.Bytes, len(data))
	}
	minSegs := int64((len(data) + DefaultMSS - 1) / DefaultMSS)
	for name, n := range map[string]Count{"Out": st.Out, "In": st.In} {
		if n.Segments < minSegs {
			t.Errorf("%s.Segments = %d, want at least %d", name, n.Segments, minSegs)
		}
		// 20% loss over more than 1400 segments: none lost is
		// impossible for this seed (and astronomically unlikely for any).
		if n.Retransmits == 0 || n.RetransmittedBytes == 0 {
			t.Errorf("%s: no retransmission counted: %+v", name, n)
		}
		if w := n.WireBytes(52); w <= n.Bytes {
			t.Errorf("%s.WireBytes(52) = %d, not above the payload %d", name, w, n.Bytes)
		}
	}
}

func TestInvalidLink(t *testing.T) {
	for name, l := range map[string]Link{
		"delay":                     {Out: Path{Delay: -1}},
		"jitter":                    {In: Path{Jitter: -1}},
		"bandwidth":                 {Out: Path{Bandwidth: -1}},
		"loss one":                  {In: Path{Loss: 1}},
		"loss neg":                  {In: Path{Loss: -0.1}},
		"retransmit":                {Out: Path{Retransmit: -1}},
		"delay above MaxDelay":      {In: Path{Delay: MaxDelay + 1}},
		"jitter above MaxJitter":    {Out: Path{Jitter: MaxJitter + 1}},
		"retransmit above MaxRTO":   {In: Path{Retransmit: MaxRTO + 1}},
		"retransmit at the maximum": {Out: Path{Retransmit: math.MaxInt64}},
		"mss":                       {MSS: -1},
		"buffer":                    {Buffer: -1},
	} {
		t.Run(name, func(t *testing.T) {
			if err := l.Validate(); !errors.Is(err, ErrInvalidLink) {
				t.Errorf("Validate = %v", err)
			}
			c, s := tcpPair(t)
			defer c.Close()
			defer s.Close()
			if sc, err := Wrap(c, l); sc != nil || !errors.Is(err, ErrInvalidLink) {
				t.Errorf("Wrap = %v, %v", sc, err)
			}
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			if sl, err := NewListener(ln, l); sl != nil || !errors.Is(err, ErrInvalidLink) {
				t.Errorf("NewListener = %v, %v", sl, err)
			}
			if conn, err := Dialer(l, nil)(context.Background(), "tcp", ln.Addr().String()); conn != nil || !errors.Is(err, ErrInvalidLink) {
				t.Errorf("Dialer = %v, %v", conn, err)
			}
		})
	}
	if err := (Link{In: Path{Loss: 0.999}}).Validate(); err != nil {
		t.Errorf("loss 0.999 refused: %v", err)
	}
	if err := (Link{Out: Path{Delay: MaxDelay, Jitter: MaxJitter, Retransmit: MaxRTO}}).Validate(); err != nil {
		t.Errorf("the maximum values refused: %v", err)
	}
}

// TestDialerAndListener: a Dialer takes a round trip to connect and shapes
// the client end; a Listener shapes the server end; either way an echo
// takes at least the RTT.
func TestDialerAndListener(t *testing.T) {
	t.Parallel()
	l := Link{Out: Path{Delay: 15 * time.Millisecond}, In: Path{Delay: 10 * time.Millisecond}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	defer ln.Close()
	serve := func(ln net.Listener) {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() { defer wg.Done(); echo(c); c.Close() }()
		}
	}

	t.Run("Dialer", func(t *testing.T) {
		wg.Add(1)
		go serve(ln)
		start := time.Now()
		c, err := Dialer(l, nil)(context.Background(), "tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if took := time.Since(start); took < l.RTT() {
			t.Errorf("dial took %v, less than the handshake's RTT %v", took, l.RTT())
		}
		if _, ok := c.(*Conn); !ok {
			t.Fatalf("Dialer returned %T", c)
		}
		if took := roundTrip(t, c, []byte("hi")); took < l.RTT() {
			t.Errorf("echo took %v, less than %v", took, l.RTT())
		}
	})

	t.Run("DialerCancel", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		slow := Link{Out: Path{Delay: time.Hour}}
		done := make(chan error, 1)
		go func() {
			c, err := Dialer(slow, nil)(ctx, "tcp", ln.Addr().String())
			if c != nil {
				c.Close()
			}
			done <- err
		}()
		time.Sleep(10 * time.Millisecond)
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Errorf("cancelled dial: %v", err)
		}
	})

	t.Run("Listener", func(t *testing.T) {
		inner, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		sl, err := NewListener(inner, l.Reverse())
		if err != nil {
			t.Fatal(err)
		}
		defer sl.Close()
		wg.Add(1)
		go serve(sl)
		c, err := net.Dial("tcp", sl.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if took := roundTrip(t, c, []byte("hi")); took < l.RTT() {
			t.Errorf("echo took %v, less than %v", took, l.RTT())
		}
	})
}

// TestCounter: a Counter shared by two connections adds up their Stats.
func TestCounter(t *testing.T) {
	var counter Counter
	l := Link{Counter: &counter, MSS: 100}
	var want Stats
	for range 2 {
		c, s := shapedPair(t, l)
		go echo(s)
		roundTrip(t, c, make([]byte, 250))
		roundTrip(t, c, make([]byte, 50))
		st := c.Stats()
		// 250 bytes are 3 segments of at most 100 and 50 are 1; the echo
		// may arrive in any number of reads, each cut on its own.
		if st.Out.Bytes != 300 || st.Out.Segments != 4 || st.In.Bytes != 300 || st.In.Segments < 4 {
			t.Errorf("Conn.Stats = %+v", st)
		}
		want.Out.Bytes += st.Out.Bytes
		want.Out.Segments += st.Out.Segments
		want.In.Bytes += st.In.Bytes
		want.In.Segments += st.In.Segments
	}
	if got := counter.Stats(); got != want {
		t.Errorf("Counter.Stats = %+v, want %+v", got, want)
	}
}

// TestManyInFlight: 200 requests in flight at once over one connection
// shaped as the transatlantic profile, each answered correctly and no
// sooner than the RTT.
func TestManyInFlight(t *testing.T) {
	t.Parallel()
	const inFlight, rounds, size = 200, 3, 100
	p := Transatlantic()
	l := p.Link("eu", "us")
	c, s := shapedPair(t, l)
	go echo(s)

	// Requests are size bytes, the first two the requester's number; one
	// reader hands each echo to its requester.
	replies := make([]chan []byte, inFlight)
	for i := range replies {
		replies[i] = make(chan []byte, 1)
	}
	go func() {
		for {
			b := make([]byte, size)
			if _, err := io.ReadFull(c, b); err != nil {
				return
			}
			replies[int(b[0])<<8|int(b[1])] <- b
		}
	}()
	var mu sync.Mutex // one Write per request, whole
	var wg sync.WaitGroup
	errs := make(chan error, inFlight*rounds)
	for i := range inFlight {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range rounds {
				req := bytes.Repeat([]byte{byte(r)}, size)
				req[0], req[1] = byte(i>>8), byte(i)
				start := time.Now()
				mu.Lock()
				_, err := c.Write(req)
				mu.Unlock()
				if err != nil {
					errs <- err
					return
				}
				got := <-replies[i]
				if took := time.Since(start); took < l.RTT() {
					errs <- errors.New("reply sooner than the RTT")
				}
				if !bytes.Equal(got, req) {
					errs <- errors.New("wrong reply")
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if st := c.Stats(); st.Out.Bytes != inFlight*rounds*size {
		t.Errorf("Out.Bytes = %d, want %d", st.Out.Bytes, inFlight*rounds*size)
	}
}

// TestLossDelaysDelivery: a lost segment arrives a retransmission timeout
// late for each time it was lost, doubling each time.
func TestLossDelaysDelivery(t *testing.T) {
	t.Parallel()
	const rto = 5 * time.Millisecond
	c, s := shapedPair(t, Link{Out: Path{Loss: 0.7, Retransmit: rto}, Seed: 3})
	for i := range 5 {
		before := c.Stats().Out.Retransmits
		start := time.Now()
		if _, err := c.Write([]byte{byte(i)}); err != nil {
			t.Fatal(err)
		}
		b := make([]byte, 1)
		if _, err := io.ReadFull(s, b); err != nil || b[0] != byte(i) {
			t.Fatalf("read %v, %v", b, err)
		}
		took := time.Since(start)
		k := c.Stats().Out.Retransmits - before
		if want := rto * time.Duration(1<<k-1); took < want {
			t.Errorf("segment lost %d times arrived after %v, sooner than %v", k, took, want)
		}
		t.Logf("segment %d: lost %d times, arrived after %v", i, k, took)
	}
	if c.Stats().Out.Retransmits == 0 {
		t.Errorf("no loss in 5 segments at 70%%: seed 3 should lose some")
	}
}
