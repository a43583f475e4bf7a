package privval

import (
	"bufio"
	"bytes"
	"context"
	"crypto"
	"crypto/ed25519"
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/signerkit/signerkit/internal/secretconn"
	"github.com/signerkit/signerkit/signbytes"
	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/signer/signertest"
)

// identity is a SecretConnection identity key.
func identity(seed byte) ed25519.PrivateKey {
	return ed25519.NewKeyFromSeed(bytes.Repeat([]byte{seed}, 32))
}

func pubOf(k ed25519.PrivateKey) ed25519.PublicKey { return k.Public().(ed25519.PublicKey) }

// shake runs the node's side of the handshake on c.
func shake(t testing.TB, c net.Conn, id ed25519.PrivateKey, v secretconn.Variant) (*secretconn.Conn, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return secretconn.Handshake(ctx, c, id, v)
}

// acceptSecret accepts the Endpoint's next connection and runs the node's
// Merlin handshake on it as id.
func acceptSecret(t *testing.T, ln net.Listener, id ed25519.PrivateKey, d Dialect) (*node, error) {
	t.Helper()
	raw := accept(t, ln, d)
	sc, err := shake(t, raw.conn, id, secretconn.Merlin)
	if err != nil {
		return nil, err
	}
	return &node{t: t, conn: sc, br: bufio.NewReader(sc), d: d}, nil
}

// unauthorizedPeer reports whether err is our allowlist refusing key.
func unauthorizedPeer(err error, key ed25519.PublicKey) bool {
	var ue *UnauthorizedPeerError
	return errors.As(err, &ue) && ue.Key.Equal(key) && errors.Is(err, signer.ErrPermissionDenied)
}

// nextMatching returns the next disconnect that match accepts, skipping
// others (an EOF after a refused handshake, say).
func nextMatching(t *testing.T, dis *disconnects, match func(error) bool) error {
	t.Helper()
	for i := 0; i < 20; i++ {
		if err := dis.next(t); match(err) {
			return err
		}
	}
	t.Fatal("no matching disconnect")
	return nil
}

// TestSecretConnectionEndpoint: an Endpoint with SecretConnection over
// TCP signs for a node whose identity is on its allowlist, shows the
// node's key in RequestInfo.Peer, and refuses a node with another key
// (UnauthorizedPeerError, ErrPermissionDenied), dialing again.
func TestSecretConnectionEndpoint(t *testing.T) {
	ours, nodeID, stranger := identity(0x51), identity(0x52), identity(0x53)
	peers := make(chan []byte, 100)
	e, k, ln, dis := startEndpoint(t, V038, "tcp", Config{
		ChainID:   chainID,
		Handshake: SecretConnection(ours, []ed25519.PublicKey{pubOf(nodeID)}),
		OnRequest: func(i RequestInfo) { peers <- i.Peer },
	})

	// A node with another identity: our side completes the handshake,
	// checks the key and hangs up.
	sn, err := acceptSecret(t, ln, stranger, V038)
	if err == nil {
		if _, err := sn.roundTrip(encPingRequest()); err == nil {
			t.Fatal("a node not on the allowlist got an answer")
		}
	}
	err = nextMatching(t, dis, func(err error) bool { return unauthorizedPeer(err, pubOf(stranger)) })
	if !errors.Is(err, signer.ErrPermissionDenied) {
		t.Fatalf("refusal %v does not wrap ErrPermissionDenied", err)
	}
	if st := e.Stats(); st.Connections != 0 || st.Requests != 0 {
		t.Fatalf("stats after a refusal: %+v", st)
	}

	// The Endpoint dials again; the allowed node is served.
	n, err := acceptSecret(t, ln, nodeID, V038)
	if err != nil {
		t.Fatal(err)
	}
	if sc := n.conn.(*secretconn.Conn); !sc.RemotePubKey().Equal(pubOf(ours)) {
		t.Fatalf("the endpoint proved %x, want its identity %x", sc.RemotePubKey(), pubOf(ours))
	}
	if r := n.call(encPubKeyRequest(chainID)); !bytes.Equal(r.pub, k.PublicKey()) {
		t.Fatalf("public key %x", r.pub)
	}
	v := testVote(typePrevote, 1, 0, 1)
	r := n.call(encSignVoteRequest(v, chainID, V038))
	if r.err != nil {
		t.Fatal(r.err.Description)
	}
	verify(t, k.PublicKey(), voteSignBytes(t, r.vote, chainID, signbytes.CometBFT), r.vote.Signature)
	// A conflicting prevote is refused and the connection kept.
	if r := n.call(encSignVoteRequest(testVote(typePrevote, 1, 0, 2), chainID, V038)); r.err == nil || r.err.Code != CodeDoubleSign {
		t.Fatalf("double sign: %+v", r.err)
	}
	if r := n.call(encPingRequest()); r.kind != msgPingResponse {
		t.Fatal("no ping after a refusal")
	}
	for i := 0; i < 4; i++ {
		if p := <-peers; !bytes.Equal(p, pubOf(nodeID)) {
			t.Fatalf("RequestInfo.Peer %x, want the node's %x", p, pubOf(nodeID))
		}
	}
	if st := e.Stats(); st.Connections != 1 || st.Requests != 4 || st.Refused != 1 {
		t.Fatalf("stats: %+v", st)
	}
}

// TestSecretConnectionAllowlists: a nil allowlist accepts any peer; an
// empty one none; the allowlist is copied.
func TestSecretConnectionAllowlists(t *testing.T) {
	ours, peer := identity(0x61), identity(0x62)
	run := func(h Handshake) (ed25519.PublicKey, error) {
		a, b := tcpPair(t)
		done := make(chan error, 1)
		go func() {
			sc, err := shake(t, b, peer, secretconn.Merlin)
			if err == nil {
				// Hold the connection until our side has decided.
				_, _ = io.Copy(io.Discard, sc)
			}
			done <- err
		}()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		c, key, err := h(ctx, a)
		if c != nil {
			_ = c.Close()
		}
		_ = a.Close()
		<-done
		return key, err
	}
	if key, err := run(SecretConnection(ours, nil)); err != nil || !key.Equal(pubOf(peer)) {
		t.Fatalf("nil allowlist: %x, %v", key, err)
	}
	if _, err := run(SecretConnection(ours, []ed25519.PublicKey{})); !unauthorizedPeer(err, pubOf(peer)) {
		t.Fatalf("empty allowlist: %v", err)
	}
	allow := []ed25519.PublicKey{bytes.Clone(pubOf(peer))}
	h := SecretConnection(ours, allow)
	allow[0][0] ^= 1
	if key, err := run(h); err != nil || !key.Equal(pubOf(peer)) {
		t.Fatalf("allowlist changed after the call: %x, %v", key, err)
	}
	if _, err := run(SecretConnection(pubOnly{pubOf(ours)}, nil)); err == nil {
		t.Fatal("a handshake with an identity that cannot sign succeeded")
	}
}

// pubOnly is a crypto.Signer that cannot sign.
type pubOnly struct{ pub ed25519.PublicKey }

func (p pubOnly) Public() crypto.PublicKey { return p.pub }
func (p pubOnly) Sign(io.Reader, []byte, crypto.SignerOpts) ([]byte, error) {
	return nil, signer.ErrUnsupported
}

// tcpPair returns the two ends of a TCP connection.
func tcpPair(t *testing.T) (net.Conn, net.Conn) {
	t.Helper()
	ln := listen(t, "tcp")
	ch := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			ch <- nil
			return
		}
		ch <- c
	}()
	a, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	b := <-ch
	if b == nil {
		t.Fatal("accept failed")
	}
	t.Cleanup(func() { _ = a.Close(); _ = b.Close() })
	return a, b
}

// startSecretServer starts a Server over TCP with
// LegacySecretConnection(id, allow).
func startSecretServer(t *testing.T, id ed25519.PrivateKey, allow []ed25519.PublicKey, timeout time.Duration, onRequest func(RequestInfo)) (*Server, *signertest.Fake, net.Listener, *disconnects) {
	t.Helper()
	return startServerConfig(t, "tcp", false, ServerConfig{ChainID: chainID, OnRequest: onRequest,
		Handshake: LegacySecretConnection(id, allow), HandshakeTimeout: timeout})
}

// dialSecret dials the Server and runs the node's pre-Merlin handshake
// as id.
func dialSecret(t *testing.T, ln net.Listener, id ed25519.PrivateKey) (*gnoNode, *secretconn.Conn, error) {
	t.Helper()
	raw := dialNative(t, ln)
	sc, err := shake(t, raw.conn, id, secretconn.PreMerlin)
	if err != nil {
		return nil, nil, err
	}
	return &gnoNode{t: t, conn: sc, br: bufio.NewReader(sc)}, sc, nil
}

// TestLegacySecretConnectionServer: a Server with LegacySecretConnection
// over TCP serves nodes on its allowlist, refuses one that is not
// (UnauthorizedPeerError, ErrPermissionDenied) and serves on.
func TestLegacySecretConnectionServer(t *testing.T) {
	ours, nodeID, stranger := identity(0x71), identity(0x72), identity(0x73)
	peers := make(chan []byte, 100)
	s, k, ln, dis := startSecretServer(t, ours, []ed25519.PublicKey{pubOf(nodeID)}, 0, func(i RequestInfo) { peers <- i.Peer })

	first, sc, err := dialSecret(t, ln, nodeID)
	if err != nil {
		t.Fatal(err)
	}
	if !sc.RemotePubKey().Equal(pubOf(ours)) {
		t.Fatalf("the server proved %x, want %x", sc.RemotePubKey(), pubOf(ours))
	}
	if url, pub, _, _ := first.call(encNativePubKeyRequest()); url != typePubKeyResponse || !bytes.Equal(pub, k.PublicKey()) {
		t.Fatalf("public key: %s %x", url, pub)
	}

	// The stranger: the handshake completes on its side, then the Server
	// hangs up.
	if sn, _, err := dialSecret(t, ln, stranger); err == nil {
		_ = sn.conn.SetDeadline(time.Now().Add(5 * time.Second))
		if _, err := sn.conn.Write(appendFrame(nil, encNativePubKeyRequest())); err == nil {
			if _, err := readFrame(sn.br, MaxNativeFrame, nil); err == nil {
				t.Fatal("a node not on the allowlist got an answer")
			}
		}
	}
	if err := nextMatching(t, dis, func(err error) bool { return unauthorizedPeer(err, pubOf(stranger)) }); !errors.Is(err, signer.ErrPermissionDenied) {
		t.Fatalf("refusal %v", err)
	}

	// The first connection and a new one are both served.
	v := testVote(typePrevote, 1, 0, 1)
	if _, sig, msg, isErr := first.call(encNativeSignRequest(tm2Bytes(t, v, chainID))); isErr {
		t.Fatal(msg)
	} else {
		verify(t, k.PublicKey(), tm2Bytes(t, v, chainID), sig)
	}
	second, _, err := dialSecret(t, ln, nodeID)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, _, isErr := second.call(encNativeSignRequest(tm2Bytes(t, testVote(typePrevote, 1, 0, 2), chainID))); !isErr {
		t.Fatal("a double sign was not refused")
	}
	if _, _, msg, isErr := second.call(encNativeSignRequest(tm2Bytes(t, testVote(typePrecommit, 1, 0, 1), chainID))); isErr {
		t.Fatalf("the precommit after a refusal: %s", msg)
	}
	for i := 0; i < 4; i++ {
		if p := <-peers; !bytes.Equal(p, pubOf(nodeID)) {
			t.Fatalf("RequestInfo.Peer %x", p)
		}
	}
	if st := s.Stats(); st.Connections != 2 || st.Requests != 4 || st.Refused != 1 {
		t.Fatalf("stats: %+v", st)
	}
}

// hangMidHandshake writes the start of a handshake message on c and
// then says nothing more.
func hangMidHandshake(c net.Conn) {
	_, _ = c.Write([]byte{0x22, 0x0a})
}

// TestSecretConnectionHandshakeTimeout: a node that stops halfway
// through the handshake is cut off after HandshakeTimeout, and the
// Endpoint dials again; no goroutine is left.
func TestSecretConnectionHandshakeTimeout(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	// The timeout bounds the good handshakes too (the redial, the node
	// served meanwhile), which a loaded CI machine (-race, parallel
	// tests) can slow to a few hundred milliseconds: 1 s.
	const timeout = time.Second
	// hungBound only catches a HandshakeTimeout that was not applied: it
	// is half the 10 s default, which would cut the handshake off
	// otherwise, and 5 times the timeout, so that a loaded machine
	// stalling this goroutine for a second or two cannot fail the test.
	// That the cut comes from HandshakeTimeout is what the
	// DeadlineExceeded checks show.
	const hungBound = DefaultHandshakeTimeout / 2
	t.Run("endpoint", func(t *testing.T) {
		ours, nodeID := identity(0x81), identity(0x82)
		_, _, ln, dis := startEndpoint(t, V038, "tcp", Config{
			Handshake: SecretConnection(ours, []ed25519.PublicKey{pubOf(nodeID)}), HandshakeTimeout: timeout})
		hung := accept(t, ln, V038)
		start := time.Now()
		hangMidHandshake(hung.conn)
		err := dis.next(t)
		elapsed := time.Since(start)
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("hung handshake ended with %v", err)
		}
		if elapsed > hungBound {
			t.Fatalf("hung handshake cut off after %v, HandshakeTimeout %v", elapsed, timeout)
		}
		// The endpoint closed the connection, and dials again.
		_ = hung.conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		if _, err := io.Copy(io.Discard, hung.conn); err != nil {
			t.Fatalf("the hung connection was not closed: %v", err)
		}
		n, err := acceptSecret(t, ln, nodeID, V038)
		if err != nil {
			t.Fatal(err)
		}
		if r := n.call(encPingRequest()); r.kind != msgPingResponse {
			t.Fatal("no ping after the redial")
		}
	})
	t.Run("server", func(t *testing.T) {
		ours, nodeID := identity(0x91), identity(0x92)
		_, _, ln, dis := startSecretServer(t, ours, []ed25519.PublicKey{pubOf(nodeID)}, timeout, nil)
		// Timed from before the dial, so that the server's deadline
		// cannot have started before start, however late this
		// goroutine runs: elapsed is then at least the timeout.
		start := time.Now()
		hung := dialNative(t, ln)
		hangMidHandshake(hung.conn)
		// Another node is served meanwhile.
		n, _, err := dialSecret(t, ln, nodeID)
		if err != nil {
			t.Fatal(err)
		}
		if url, _, _, _ := n.call(encNativePubKeyRequest()); url != typePubKeyResponse {
			t.Fatal("no public key")
		}
		_ = hung.conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		if _, err := io.Copy(io.Discard, hung.conn); err != nil {
			t.Fatalf("the hung connection was not closed: %v", err)
		}
		if elapsed := time.Since(start); elapsed < timeout/2 || elapsed > hungBound {
			t.Fatalf("hung handshake cut off after %v, HandshakeTimeout %v", elapsed, timeout)
		}
		if err := dis.next(t); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("hung handshake ended with %v", err)
		}
	})
}
