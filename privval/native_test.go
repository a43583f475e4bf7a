package privval

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/signerkit/signerkit/signbytes"
	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/signer/signertest"
)

// Native protocol frames as gno v1.7.1's amino writes them
// (amino.MarshalAnySizedWriter), captured from gno's own code.
var (
	goldenPubKeyRequest = mustHex("200a1e2f746d2e72656d6f74657369676e65722e5075624b657952657175657374")
	goldenSignRequest   = mustHex("250a1c2f746d2e72656d6f74657369676e65722e5369676e5265717565737412050a03010203")
	// PubKeyResponse for the key 00 01 … 1f.
	goldenPubKeyResponse = mustHex("5c0a1f2f746d2e72656d6f74657369676e65722e5075624b6579526573706f6e736512390a370a112f746d2e5075624b65794564323535313912220a20000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f")
	goldenSignResponse   = mustHex("250a1d2f746d2e72656d6f74657369676e65722e5369676e526573706f6e736512040a020909")
	goldenSignError      = mustHex("290a1d2f746d2e72656d6f74657369676e65722e5369676e526573706f6e7365120812060a04626f6f6d")
)

func TestNativeGolden(t *testing.T) {
	req, err := decodeNativeRequest(goldenPubKeyRequest[1:])
	if err != nil || !req.pubKey {
		t.Fatalf("PubKeyRequest: %+v %v", req, err)
	}
	req, err = decodeNativeRequest(goldenSignRequest[1:])
	if err != nil || req.pubKey || !bytes.Equal(req.signBytes, []byte{1, 2, 3}) {
		t.Fatalf("SignRequest: %+v %v", req, err)
	}
	pub := make([]byte, 32)
	for i := range pub {
		pub[i] = byte(i)
	}
	if got := appendFrame(nil, appendNativePubKeyResponse(nil, pub)); !bytes.Equal(got, goldenPubKeyResponse) {
		t.Fatalf("PubKeyResponse\n %x\nwant\n %x", got, goldenPubKeyResponse)
	}
	if got := appendFrame(nil, appendNativeSignResponse(nil, []byte{9, 9}, nil)); !bytes.Equal(got, goldenSignResponse) {
		t.Fatalf("SignResponse %x", got)
	}
	if got := appendFrame(nil, appendNativeSignResponse(nil, nil, errors.New("boom"))); !bytes.Equal(got, goldenSignError) {
		t.Fatalf("SignResponse with error %x", got)
	}
}

// gnoNode is gno's remote signer client side, for tests.
type gnoNode struct {
	t    testing.TB
	conn net.Conn
	br   *bufio.Reader
}

func dialNative(t testing.TB, ln net.Listener) *gnoNode {
	t.Helper()
	c, err := net.Dial(ln.Addr().Network(), ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return &gnoNode{t: t, conn: c, br: bufio.NewReader(c)}
}

func encNativeSignRequest(sb []byte) []byte {
	var e enc
	e.any(typeSignRequest, func(v *enc) { v.bytes(1, sb) })
	return e.b
}

func encNativePubKeyRequest() []byte {
	var e enc
	e.any(typePubKeyRequest, func(*enc) {})
	return e.b
}

// call sends a request and returns the response's type and, for a sign,
// the signature or the error string.
func (n *gnoNode) call(msg []byte) (url string, sig []byte, errStr string, isErr bool) {
	n.t.Helper()
	_ = n.conn.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := n.conn.Write(appendFrame(nil, msg)); err != nil {
		n.t.Fatal(err)
	}
	b, err := readFrame(n.br, MaxNativeFrame, nil)
	if err != nil {
		n.t.Fatal(err)
	}
	url, value, err := decodeAny(b)
	if err != nil {
		n.t.Fatal(err)
	}
	err = fields(value, func(f field) error {
		switch {
		case url == typePubKeyResponse && f.num == 1:
			u, v, err := decodeAny(f.b)
			if err != nil || u != typePubKeyEd25519 {
				return errors.New("bad public key")
			}
			return fields(v, func(g field) error { sig = g.b; return nil })
		case f.num == 1:
			sig = f.b
		case f.num == 2:
			isErr = true
			return fields(f.b, func(g field) error { errStr = string(g.b); return nil })
		}
		return nil
	})
	if err != nil {
		n.t.Fatal(err)
	}
	return url, sig, errStr, isErr
}

func startServer(t *testing.T, network string, durable bool) (*Server, *signertest.Fake, net.Listener, *disconnects) {
	t.Helper()
	return startServerConfig(t, network, durable, ServerConfig{ChainID: chainID})
}

// startServerConfig starts a Server with cfg, whose OnDisconnect it sets,
// on a new key, guard and listener, and stops it when the test ends.
func startServerConfig(t *testing.T, network string, durable bool, cfg ServerConfig) (*Server, *signertest.Fake, net.Listener, *disconnects) {
	t.Helper()
	k := newKey(2)
	g := newGuard(t, k, durable)
	ln := listen(t, network)
	dis := newDisconnects()
	cfg.OnDisconnect = dis.add
	s, err := NewServer(g, cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if !errors.Is(err, context.Canceled) {
				t.Errorf("Serve: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Error("Serve did not return")
		}
	})
	return s, k, ln, dis
}

func tm2Bytes(t testing.TB, v *vote, chain string) []byte {
	return voteSignBytes(t, v, chain, signbytes.TM2)
}

func TestServer(t *testing.T) {
	for _, network := range []string{"unix", "tcp"} {
		t.Run(network, func(t *testing.T) {
			s, k, ln, _ := startServer(t, network, false)
			n := dialNative(t, ln)
			if url, pub, _, _ := n.call(encNativePubKeyRequest()); url != typePubKeyResponse || !bytes.Equal(pub, k.PublicKey()) {
				t.Fatalf("pubkey: %s %x", url, pub)
			}
			sb := tm2Bytes(t, testVote(typePrevote, 1, 0, 1), chainID)
			url, sig, _, isErr := n.call(encNativeSignRequest(sb))
			if url != typeSignResponse || isErr {
				t.Fatalf("sign: %s %v", url, isErr)
			}
			verify(t, k.PublicKey(), sb, sig)
			if _, again, _, _ := n.call(encNativeSignRequest(sb)); !bytes.Equal(again, sig) {
				t.Fatal("repeat gave another signature")
			}
			// A second node, same key: a conflicting prevote is refused.
			n2 := dialNative(t, ln)
			_, sig2, msg, isErr := n2.call(encNativeSignRequest(tm2Bytes(t, testVote(typePrevote, 1, 0, 2), chainID)))
			if !isErr || sig2 != nil || !bytes.Contains([]byte(msg), []byte("double sign")) {
				t.Fatalf("conflict: %q %x", msg, sig2)
			}
			// Timestamp-only change: refused, the protocol cannot carry
			// the old timestamp.
			later := testVote(typePrevote, 1, 0, 1)
			later.Timestamp = later.Timestamp.Add(time.Second)
			if _, _, msg, isErr := n2.call(encNativeSignRequest(tm2Bytes(t, later, chainID))); !isErr || msg == "" {
				t.Fatal("timestamp-only change was signed")
			}
			// Other chain and garbage sign bytes: refused.
			if _, _, _, isErr := n.call(encNativeSignRequest(tm2Bytes(t, testVote(typePrevote, 3, 0, 1), "other"))); !isErr {
				t.Fatal("other chain signed")
			}
			if _, _, _, isErr := n.call(encNativeSignRequest([]byte("not a vote"))); !isErr {
				t.Fatal("garbage signed")
			}
			// Both connections still serve.
			sb = tm2Bytes(t, testVote(typePrecommit, 1, 0, 1), chainID)
			if _, sig, _, isErr := n2.call(encNativeSignRequest(sb)); isErr {
				t.Fatal("precommit refused")
			} else {
				verify(t, k.PublicKey(), sb, sig)
			}
			st := s.Stats()
			for deadline := time.Now().Add(5 * time.Second); st.Requests < 8 && time.Now().Before(deadline); st = s.Stats() {
				time.Sleep(time.Millisecond)
			}
			if st.Connections != 2 || st.Requests != 8 || st.Refused != 4 || st.ProtocolErrors != 0 {
				t.Fatalf("stats %+v", st)
			}
			if ls, ok := st.Phases.Label("prevote"); !ok || ls.Count != 2 || ls.Errors != 3 {
				t.Fatalf("prevote stats %+v", ls)
			}
		})
	}
}

func TestServerBadFrames(t *testing.T) {
	for name, frame := range map[string][]byte{
		"garbage":     appendFrame(nil, []byte{0xff, 1, 2}),
		"oversized":   appendFrame(nil, make([]byte, MaxNativeFrame+1))[:20],
		"unknown":     appendFrame(nil, func() []byte { var e enc; e.any("/tm.remotesigner.Other", func(*enc) {}); return e.b }()),
		"response":    goldenSignResponse,
		"extra field": appendFrame(nil, append(encNativePubKeyRequest(), 0x18, 1)),
		"no type":     appendFrame(nil, []byte{0x12, 0}),
		"empty":       appendFrame(nil, nil),
	} {
		t.Run(name, func(t *testing.T) {
			s, _, ln, dis := startServer(t, "unix", false)
			n := dialNative(t, ln)
			if _, err := n.conn.Write(frame); err != nil {
				t.Fatal(err)
			}
			err := dis.next(t)
			if !errors.Is(err, signer.ErrProtocol) {
				t.Fatalf("disconnect: %v", err)
			}
			if st := s.Stats(); st.ProtocolErrors != 1 {
				t.Fatalf("stats %+v", st)
			}
			// The server still accepts.
			if url, _, _, _ := dialNative(t, ln).call(encNativePubKeyRequest()); url != typePubKeyResponse {
				t.Fatal(url)
			}
		})
	}
}
