package privval

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"errors"
	"io"
	"net"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/signerkit/signerkit/signbytes"
	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/signer/signertest"
)

const chainID = "test-chain"

// disconnects collects what OnDisconnect reports.
type disconnects struct {
	mu   sync.Mutex
	errs []error
	ch   chan error
}

func newDisconnects() *disconnects { return &disconnects{ch: make(chan error, 100)} }

func (d *disconnects) add(err error) {
	d.mu.Lock()
	d.errs = append(d.errs, err)
	d.mu.Unlock()
	select {
	case d.ch <- err:
	default:
	}
}

func (d *disconnects) next(t *testing.T) error {
	t.Helper()
	select {
	case err := <-d.ch:
		return err
	case <-time.After(10 * time.Second):
		t.Fatal("no disconnect reported")
	}
	return nil
}

func startEndpoint(t *testing.T, d Dialect, network string, cfg Config) (*Endpoint, *signertest.Fake, net.Listener, *disconnects) {
	t.Helper()
	k := newKey(1)
	g := newGuard(t, k, false)
	ln := listen(t, network)
	dis := newDisconnects()
	cfg.Dialect, cfg.Network, cfg.Address, cfg.OnDisconnect = d, network, ln.Addr().String(), dis.add
	if cfg.MinBackoff == 0 {
		cfg.MinBackoff = 5 * time.Millisecond
	}
	e, err := NewEndpoint(g, cfg)
	if err != nil {
		t.Fatal(err)
	}
	runEndpoint(t, e)
	return e, k, ln, dis
}

func TestEndpoint(t *testing.T) {
	for _, d := range []Dialect{V038, V034, GnoTMKMS} {
		for _, network := range []string{"unix", "tcp"} {
			t.Run(d.String()+"/"+network, func(t *testing.T) { testEndpoint(t, d, network) })
		}
	}
}

func testEndpoint(t *testing.T, d Dialect, network string) {
	var infos []RequestInfo
	var mu sync.Mutex
	e, k, ln, _ := startEndpoint(t, d, network, Config{ChainID: chainID, OnRequest: func(i RequestInfo) {
		mu.Lock()
		infos = append(infos, i)
		mu.Unlock()
	}})
	n := accept(t, ln, d)
	format := d.format()

	if r := n.call(encPingRequest()); r.kind != msgPingResponse || r.err != nil {
		t.Fatalf("ping: %+v", r)
	}
	if r := n.call(encPubKeyRequest(chainID)); r.kind != msgPubKeyResponse || r.err != nil || !bytes.Equal(r.pub, k.PublicKey()) {
		t.Fatalf("pubkey: %+v", r)
	}
	if r := n.call(encPubKeyRequest("other")); r.err == nil || r.err.Code != CodeInvalidRequest || r.pub != nil {
		t.Fatalf("pubkey for another chain: %+v", r)
	}

	// Proposal, prevote, precommit at height 1.
	p := testProposal(1, 0, 1)
	r := n.call(encSignProposalRequest(p, chainID))
	if r.err != nil || r.proposal == nil {
		t.Fatalf("proposal: %+v", r)
	}
	verify(t, k.PublicKey(), proposalSignBytes(t, r.proposal, chainID, format), r.proposal.Signature)
	if r.proposal.Height != 1 || r.proposal.POLRound != -1 || !r.proposal.BlockID.Equal(p.BlockID) || !r.proposal.Timestamp.Equal(p.Timestamp) {
		t.Fatalf("proposal echoed wrong: %+v", r.proposal)
	}

	pv := testVote(typePrevote, 1, 0, 1)
	r = n.call(encSignVoteRequest(pv, chainID, d))
	if r.err != nil || r.vote == nil {
		t.Fatalf("prevote: %+v", r)
	}
	verify(t, k.PublicKey(), voteSignBytes(t, r.vote, chainID, format), r.vote.Signature)
	if r.vote.ExtensionSignature != nil {
		t.Fatal("prevote with an extension signature")
	}
	if !bytes.Equal(r.vote.ValidatorAddress, pv.ValidatorAddress) || r.vote.ValidatorIndex != 3 {
		t.Fatalf("prevote echoed wrong: %+v", r.vote)
	}

	pc := testVote(typePrecommit, 1, 0, 1)
	pc.Extension = []byte("app data")
	r = n.call(encSignVoteRequest(pc, chainID, d))
	if r.err != nil || r.vote == nil {
		t.Fatalf("precommit: %+v", r)
	}
	verify(t, k.PublicKey(), voteSignBytes(t, r.vote, chainID, format), r.vote.Signature)
	if d == V038 {
		if !bytes.Equal(r.vote.Extension, pc.Extension) {
			t.Fatalf("extension echoed as %q", r.vote.Extension)
		}
		verify(t, k.PublicKey(), extensionSignBytes(t, pc, chainID), r.vote.ExtensionSignature)
	} else if r.vote.Extension != nil || r.vote.ExtensionSignature != nil {
		t.Fatalf("%v echoed extension fields: %+v", d, r.vote)
	}
	precommitSig := r.vote.Signature
	signs := k.Signs()

	// The same precommit again: the same signature, from the state.
	r = n.call(encSignVoteRequest(pc, chainID, d))
	if r.err != nil || !bytes.Equal(r.vote.Signature, precommitSig) {
		t.Fatalf("repeated precommit: %+v", r)
	}
	// Only the timestamp differs: the old signature and timestamp.
	later := *pc
	later.Timestamp = pc.Timestamp.Add(time.Second)
	r = n.call(encSignVoteRequest(&later, chainID, d))
	if r.err != nil || !bytes.Equal(r.vote.Signature, precommitSig) || !r.vote.Timestamp.Equal(pc.Timestamp) {
		t.Fatalf("timestamp-only change: %+v", r)
	}
	verify(t, k.PublicKey(), voteSignBytes(t, r.vote, chainID, format), r.vote.Signature)
	if d == V038 {
		verify(t, k.PublicKey(), extensionSignBytes(t, pc, chainID), r.vote.ExtensionSignature)
	}
	if extra := k.Signs() - signs; extra != 0 {
		t.Fatalf("the backend signed %d more times for repeats (the vote and its extension come from the guard)", extra)
	}

	// A conflicting precommit and a regression: refused, connection kept.
	conflict := testVote(typePrecommit, 1, 0, 2)
	r = n.call(encSignVoteRequest(conflict, chainID, d))
	if r.err == nil || r.err.Code != CodeDoubleSign || r.vote != nil && r.vote.Signature != nil {
		t.Fatalf("conflicting precommit: %+v", r)
	}
	r = n.call(encSignVoteRequest(testVote(typePrevote, 1, 0, 1), chainID, d))
	if r.err == nil || r.err.Code != CodeDoubleSign {
		t.Fatalf("regression: %+v", r)
	}
	r = n.call(encSignProposalRequest(testProposal(1, 0, 2), chainID))
	if r.err == nil || r.err.Code != CodeDoubleSign || r.proposal != nil && r.proposal.Signature != nil {
		t.Fatalf("proposal regression: %+v", r)
	}
	// Wrong chain, bad vote type, extension on a prevote: refused.
	r = n.call(encSignVoteRequest(testVote(typePrevote, 2, 0, 1), "other", d))
	if r.err == nil || r.err.Code != CodeInvalidRequest {
		t.Fatalf("other chain: %+v", r)
	}
	r = n.call(encSignVoteRequest(testVote(7, 2, 0, 1), chainID, d))
	if r.err == nil || r.err.Code != CodeInvalidRequest {
		t.Fatalf("vote type 7: %+v", r)
	}
	if d == V038 {
		bad := testVote(typePrevote, 2, 0, 1)
		bad.Extension = []byte("x")
		r = n.call(encSignVoteRequest(bad, chainID, d))
		if r.err == nil || r.err.Code != CodeInvalidRequest {
			t.Fatalf("extension on a prevote: %+v", r)
		}
		// A precommit for nil carries no extension signature.
		r = n.call(encSignVoteRequest(testVote(typePrecommit, 2, 0, 0), chainID, d))
		if r.err != nil || r.vote.ExtensionSignature != nil {
			t.Fatalf("nil precommit: %+v", r)
		}
		verify(t, k.PublicKey(), voteSignBytes(t, r.vote, chainID, format), r.vote.Signature)
	}
	// Still the same connection.
	if r := n.call(encPingRequest()); r.kind != msgPingResponse {
		t.Fatalf("ping after refusals: %+v", r)
	}

	// OnRequest and the counters run just after a response is written.
	st := e.Stats()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); st = e.Stats() {
		mu.Lock()
		n := uint64(len(infos))
		mu.Unlock()
		if n == st.Requests && n >= 14 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	if st.Connections != 1 || st.ProtocolErrors != 0 || st.Refused == 0 || st.Requests < 10 {
		t.Fatalf("stats %+v", st)
	}
	for _, label := range []string{"proposal", "prevote", "precommit", LabelPing, LabelPubKey} {
		ls, ok := st.Phases.Label(label)
		if !ok || ls.Count == 0 || ls.Min <= 0 || ls.P50 < ls.Min || ls.P99 < ls.P50 || ls.Max < ls.P99 {
			t.Fatalf("phase %s: %+v", label, ls)
		}
	}
	if ls, _ := st.Phases.Label("precommit"); ls.Errors != 1 {
		t.Fatalf("precommit errors %d, want 1 (the conflict)", ls.Errors)
	}
	mu.Lock()
	defer mu.Unlock()
	if uint64(len(infos)) != st.Requests {
		t.Fatalf("%d OnRequest calls, %d requests", len(infos), st.Requests)
	}
	for _, i := range infos {
		if i.Label == "precommit" && i.Height == 1 && i.TimestampChanged && i.Cached && i.Err == nil {
			return
		}
	}
	t.Fatalf("no OnRequest for the timestamp-only precommit in %+v", infos)
}

// TestEndpointBadFrames sends frames that break the protocol: each ends
// the connection with a typed error, and the endpoint dials again.
func TestEndpointBadFrames(t *testing.T) {
	cases := []struct {
		name  string
		frame []byte // written raw, length prefix included
		check func(*ProtocolError) bool
	}{
		{"garbage", appendFrame(nil, []byte{0xff, 0xff, 0xff}), func(e *ProtocolError) bool { return !e.TooLarge && !e.Unknown }},
		{"oversized", appendFrame(nil, make([]byte, MaxFrame+1)), func(e *ProtocolError) bool { return e.TooLarge }},
		{"unknown type", appendFrame(nil, []byte{9<<3 | 2, 0}), func(e *ProtocolError) bool { return e.Unknown }},
		{"a response", appendFrame(nil, []byte{msgPingResponse<<3 | 2, 0}), func(e *ProtocolError) bool { return !e.Unknown }},
		{"two requests in one", appendFrame(nil, append(encPingRequest(), encPingRequest()...)), func(e *ProtocolError) bool { return true }},
		{"empty", appendFrame(nil, nil), func(e *ProtocolError) bool { return true }},
		{"truncated vote", appendFrame(nil, []byte{msgSignVoteRequest<<3 | 2, 3, 10, 5, 8}), func(e *ProtocolError) bool { return true }},
		{"bad timestamp", appendFrame(nil, encSignVoteRequest(&vote{Type: 1, Height: 1, Timestamp: time.Unix(1<<40, 0)}, chainID, V038)), func(e *ProtocolError) bool { return true }},
		{"length overflow", bytes.Repeat([]byte{0xff}, 11), func(e *ProtocolError) bool { return true }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e, _, ln, dis := startEndpoint(t, V038, "unix", Config{})
			n := accept(t, ln, V038)
			if r := n.call(encPingRequest()); r.kind != msgPingResponse {
				t.Fatalf("ping: %+v", r)
			}
			if _, err := n.conn.Write(c.frame); err != nil {
				t.Fatal(err)
			}
			err := dis.next(t)
			var pe *ProtocolError
			if !errors.As(err, &pe) || !errors.Is(err, signer.ErrProtocol) || !c.check(pe) {
				t.Fatalf("disconnect error %v (%T)", err, err)
			}
			if pe.TooLarge != errors.Is(err, signer.ErrMessageTooLarge) {
				t.Fatalf("TooLarge %v but errors.Is ErrMessageTooLarge %v", pe.TooLarge, !pe.TooLarge)
			}
			// The endpoint closed the connection...
			_ = n.conn.SetReadDeadline(time.Now().Add(5 * time.Second))
			if _, err := io.ReadAll(n.conn); err != nil && !errors.Is(err, syscall.ECONNRESET) {
				t.Fatalf("connection not closed: %v", err)
			}
			// ...and dials again.
			n2 := accept(t, ln, V038)
			if r := n2.call(encPingRequest()); r.kind != msgPingResponse {
				t.Fatalf("ping after redial: %+v", r)
			}
			if st := e.Stats(); st.ProtocolErrors != 1 || st.Connections != 2 {
				t.Fatalf("stats %+v", st)
			}
		})
	}
}

// TestEndpointReconnect: the validator drops the connection, or is not
// there yet; the endpoint keeps dialing.
func TestEndpointReconnect(t *testing.T) {
	k := newKey(1)
	g := newGuard(t, k, false)
	ln := listen(t, "tcp")
	addr := ln.Addr().String()
	_ = ln.Close() // nobody listening yet
	dis := newDisconnects()
	e, err := NewEndpoint(g, Config{Dialect: V034, Network: "tcp", Address: addr, MinBackoff: time.Millisecond, MaxBackoff: 20 * time.Millisecond, OnDisconnect: dis.add})
	if err != nil {
		t.Fatal(err)
	}
	runEndpoint(t, e)
	if err := dis.next(t); err == nil {
		t.Fatal("a failed dial reported no error")
	}
	ln2, err := net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("port %s taken again: %v", addr, err)
	}
	defer ln2.Close()
	for i := 0; i < 3; i++ {
		n := accept(t, ln2, V034)
		r := n.call(encSignVoteRequest(testVote(typePrevote, int64(i+1), 0, 1), chainID, V034))
		if r.err != nil {
			t.Fatal(r.err.Description)
		}
		verify(t, k.PublicKey(), voteSignBytes(t, r.vote, chainID, signbytes.CometBFT), r.vote.Signature)
		_ = n.conn.Close()
	}
}

// TestEndpointIdle: a validator that goes quiet is dropped after
// IdleTimeout, and dialed again.
func TestEndpointIdle(t *testing.T) {
	_, _, ln, dis := startEndpoint(t, V038, "unix", Config{IdleTimeout: 50 * time.Millisecond})
	accept(t, ln, V038)
	var ne net.Error
	if err := dis.next(t); !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("idle disconnect: %v", err)
	}
	// The redialed connection is idle too until the ping arrives: a
	// loaded machine that holds this goroutine up past IdleTimeout gets
	// it dropped, and the endpoint dials again, every IdleTimeout; the
	// connections it dropped meanwhile wait in the listener's queue. The
	// test takes them in turn until one answers, for up to 10 s.
	begin := time.Now()
	for try := 1; ; try++ {
		n := accept(t, ln, V038)
		b, err := n.roundTrip(encPingRequest())
		if err == nil {
			r, err := decodeResponse(b, V038)
			if err != nil || r.kind != msgPingResponse {
				t.Fatalf("no ping after the idle redial: %x, %v", b, err)
			}
			break
		}
		if derr := dis.next(t); !errors.As(derr, &ne) || !ne.Timeout() || time.Since(begin) > 10*time.Second {
			t.Fatalf("ping after the idle redial, try %d: %v (disconnect: %v)", try, err, derr)
		}
		t.Logf("ping after the idle redial, try %d: %v (the endpoint went idle first)", try, err)
	}
}

// TestEndpointHandshake: the Handshake hook runs on every connection and
// its failure ends the connection.
func TestEndpointHandshake(t *testing.T) {
	var calls int
	var mu sync.Mutex
	peer := newKey(9).PublicKey()
	hs := func(ctx context.Context, c net.Conn) (net.Conn, ed25519.PublicKey, error) {
		mu.Lock()
		defer mu.Unlock()
		calls++
		if calls == 1 {
			return nil, nil, errors.New("not allowed")
		}
		return c, peer, nil
	}
	got := make(chan []byte, 10)
	_, _, ln, dis := startEndpoint(t, V038, "tcp", Config{
		Handshake: hs,
		OnRequest: func(i RequestInfo) { got <- i.Peer },
	})
	accept(t, ln, V038)
	if err := dis.next(t); err == nil || !bytes.Contains([]byte(err.Error()), []byte("not allowed")) {
		t.Fatalf("handshake failure: %v", err)
	}
	n := accept(t, ln, V038)
	n.call(encPingRequest())
	if p := <-got; !bytes.Equal(p, peer) {
		t.Fatalf("RequestInfo.Peer %x", p)
	}
}

func TestNewEndpointErrors(t *testing.T) {
	g := newGuard(t, newKey(1), false)
	for _, cfg := range []Config{
		{Network: "unix", Address: "/x"},
		{Dialect: V038},
		{Dialect: V038, Network: "udp", Address: "x:1"},
		{Dialect: 9, Network: "unix", Address: "/x"},
	} {
		if _, err := NewEndpoint(g, cfg); !errors.Is(err, signer.ErrInvalidArgument) {
			t.Errorf("%+v: %v", cfg, err)
		}
	}
	if _, err := NewEndpoint(nil, Config{Dialect: V038, Network: "unix", Address: "/x"}); !errors.Is(err, signer.ErrInvalidArgument) {
		t.Errorf("nil guard: %v", err)
	}
}
