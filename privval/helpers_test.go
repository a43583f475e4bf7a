package privval

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/hex"
	"errors"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/signerkit/signerkit/guard"
	"github.com/signerkit/signerkit/signbytes"
	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/signer/signertest"
)

// newKey returns a fake Ed25519 signer whose seed is seed repeated.
func newKey(seed byte) *signertest.Fake { return signertest.NewFake(seed) }

// newGuard returns a guard around k with AutoInit, its state in memory or,
// when durable, in a directory on disk.
func newGuard(t testing.TB, k signer.Signer, durable bool) *guard.Guard {
	t.Helper()
	cfg := guard.Config{AutoInit: true}
	if durable {
		cfg.Dir = t.TempDir()
	} else {
		cfg.FS = &guard.MemFS{}
	}
	g, err := guard.New(k, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = g.Close() })
	return g
}

// listen opens a listener on network ("unix" or "tcp").
func listen(t testing.TB, network string) net.Listener {
	t.Helper()
	addr := "127.0.0.1:0"
	if network == "unix" {
		// Unix socket paths are short (108 bytes); t.TempDir may be long.
		dir, err := os.MkdirTemp("", "pv")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = os.RemoveAll(dir) })
		addr = filepath.Join(dir, "s")
	}
	ln, err := net.Listen(network, addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	return ln
}

// node is the validator's side of a privval connection, for tests.
type node struct {
	t    testing.TB
	conn net.Conn
	br   *bufio.Reader
	d    Dialect
}

func accept(t testing.TB, ln net.Listener, d Dialect) *node {
	t.Helper()
	type res struct {
		c   net.Conn
		err error
	}
	ch := make(chan res, 1)
	go func() { c, err := ln.Accept(); ch <- res{c, err} }()
	select {
	case r := <-ch:
		if r.err != nil {
			t.Fatal(r.err)
		}
		t.Cleanup(func() { _ = r.c.Close() })
		return &node{t: t, conn: r.c, br: bufio.NewReader(r.c), d: d}
	case <-time.After(10 * time.Second):
		_ = ln.Close()
		t.Fatal("the endpoint did not dial in")
	}
	return nil
}

// roundTrip sends one message (without its length prefix) and reads the
// answer.
func (n *node) roundTrip(msg []byte) ([]byte, error) {
	_ = n.conn.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := n.conn.Write(appendFrame(nil, msg)); err != nil {
		return nil, err
	}
	return readFrame(n.br, MaxNativeFrame, nil)
}

func (n *node) call(msg []byte) response {
	n.t.Helper()
	b, err := n.roundTrip(msg)
	if err != nil {
		n.t.Fatalf("round trip: %v", err)
	}
	r, err := decodeResponse(b, n.d)
	if err != nil {
		n.t.Fatalf("response %x: %v", b, err)
	}
	return r
}

// Request encoders, the validator's side.

func encPubKeyRequest(chainID string) []byte {
	var e enc
	e.message(msgPubKeyRequest, func(m *enc) { m.string(1, chainID) })
	return e.b
}

func encPingRequest() []byte {
	var e enc
	e.bytesAlways(msgPingRequest, nil)
	return e.b
}

func encSignVoteRequest(v *vote, chainID string, d Dialect) []byte {
	var e enc
	e.message(msgSignVoteRequest, func(m *enc) {
		m.vote(1, v, d)
		m.string(2, chainID)
	})
	return e.b
}

func encSignProposalRequest(p *proposal, chainID string) []byte {
	var e enc
	e.message(msgSignProposalRequest, func(m *enc) {
		m.proposal(1, p)
		m.string(2, chainID)
	})
	return e.b
}

// response is a decoded response, the validator's side.
type response struct {
	kind     int
	pub      []byte
	vote     *vote
	proposal *proposal
	err      *remoteError
}

func decodeResponse(b []byte, d Dialect) (response, error) {
	var r response
	err := fields(b, func(f field) error {
		r.kind = f.num
		if err := f.want(wireBytes); err != nil {
			return err
		}
		return fields(f.b, func(g field) error {
			switch {
			case g.num == 2:
				r.err = &remoteError{}
				return fields(g.b, func(h field) error {
					switch h.num {
					case 1:
						c, err := h.int32()
						r.err.Code = ErrorCode(c)
						return err
					case 2:
						r.err.Description = string(h.b)
					}
					return nil
				})
			case f.num == msgPubKeyResponse && g.num == 1:
				return fields(g.b, func(h field) error {
					if h.num == 1 {
						r.pub = h.b
					}
					return nil
				})
			case f.num == msgSignedVoteResponse && g.num == 1:
				v, err := decodeVote(g.b, d)
				r.vote = &v
				return err
			case f.num == msgSignedProposalResponse && g.num == 1:
				p, err := decodeProposal(g.b)
				r.proposal = &p
				return err
			}
			return nil
		})
	})
	return r, err
}

// signBytesOf returns the sign bytes a verifier builds for v or p.
func voteSignBytes(t testing.TB, v *vote, chainID string, f signbytes.Format) []byte {
	t.Helper()
	phase := signbytes.Prevote
	if v.Type == typePrecommit {
		phase = signbytes.Precommit
	}
	b, err := signbytes.Message{Format: f, Phase: phase, Height: v.Height, Round: int64(v.Round),
		BlockID: v.BlockID, Timestamp: v.Timestamp, ChainID: chainID}.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func extensionSignBytes(t testing.TB, v *vote, chainID string) []byte {
	t.Helper()
	b, err := signbytes.Message{Format: signbytes.CometBFT, Phase: signbytes.VoteExtension, Height: v.Height,
		Round: int64(v.Round), ChainID: chainID, Extension: v.Extension}.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func proposalSignBytes(t testing.TB, p *proposal, chainID string, f signbytes.Format) []byte {
	t.Helper()
	b, err := signbytes.Message{Format: f, Phase: signbytes.Proposal, Height: p.Height, Round: int64(p.Round),
		POLRound: int64(p.POLRound), BlockID: p.BlockID, Timestamp: p.Timestamp, ChainID: chainID}.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func verify(t testing.TB, pub ed25519.PublicKey, msg, sig []byte) {
	t.Helper()
	if !ed25519.Verify(pub, msg, sig) {
		t.Fatalf("signature %x does not verify over %x", sig, msg)
	}
}

func blockID(tag byte) signbytes.BlockID {
	if tag == 0 {
		return signbytes.BlockID{}
	}
	return signbytes.BlockID{Hash: bytes.Repeat([]byte{tag}, 32),
		PartSetHeader: signbytes.PartSetHeader{Total: 1, Hash: bytes.Repeat([]byte{^tag}, 32)}}
}

var baseTime = time.Date(2026, 12, 1, 10, 0, 0, 123456789, time.UTC)

func testVote(typ int32, h int64, r int32, block byte) *vote {
	return &vote{Type: typ, Height: h, Round: r, BlockID: blockID(block), Timestamp: baseTime.Add(time.Duration(h) * time.Second),
		ValidatorAddress: bytes.Repeat([]byte{0xaa}, 20), ValidatorIndex: 3}
}

func testProposal(h int64, r int32, block byte) *proposal {
	return &proposal{Type: typeProposal, Height: h, Round: r, POLRound: -1, BlockID: blockID(block),
		Timestamp: baseTime.Add(time.Duration(h) * time.Second)}
}

// runEndpoint starts e.Run and stops it at cleanup, checking that it
// returned.
func runEndpoint(t testing.TB, e *Endpoint) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if !errors.Is(err, context.Canceled) {
				t.Errorf("Run returned %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Error("Run did not return")
		}
	})
}

func mustHex(s string) []byte {
	b, err := hex.DecodeString(s)
	if err != nil {
		panic(err)
	}
	return b
}
