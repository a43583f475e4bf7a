package privvaltest_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"errors"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/signerkit/signerkit/guard"
	"github.com/signerkit/signerkit/inprocess"
	"github.com/signerkit/signerkit/internal/secretconn"
	"github.com/signerkit/signerkit/privval"
	"github.com/signerkit/signerkit/privval/privvaltest"
	"github.com/signerkit/signerkit/signbytes"
	"github.com/signerkit/signerkit/signer"
)

const chainID = "test-chain"

var t0 = time.Date(2026, 12, 1, 10, 0, 0, 123456789, time.UTC)

func blockID(tag byte) signbytes.BlockID {
	return signbytes.BlockID{Hash: bytes.Repeat([]byte{tag}, 32),
		PartSetHeader: signbytes.PartSetHeader{Total: 1, Hash: bytes.Repeat([]byte{^tag}, 32)}}
}

// newGuard returns a guard around a new in-process Ed25519 key, its state
// in a temporary directory.
func newGuard(t *testing.T) (*guard.Guard, ed25519.PublicKey) {
	t.Helper()
	k, err := inprocess.Generate(signer.Ed25519)
	if err != nil {
		t.Fatal(err)
	}
	g, err := guard.New(k, guard.Config{Dir: t.TempDir(), AutoInit: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = g.Close() })
	return g, k.Public().(ed25519.PublicKey)
}

// secretHandshake is a SecretConnection handshake as identity that
// accepts only the peer key want.
func secretHandshake(identity ed25519.PrivateKey, v secretconn.Variant, want ed25519.PublicKey) privval.Handshake {
	return func(ctx context.Context, conn net.Conn) (net.Conn, ed25519.PublicKey, error) {
		sc, err := secretconn.Handshake(ctx, conn, identity, v)
		if err != nil {
			return nil, nil, err
		}
		if !sc.RemotePubKey().Equal(want) {
			return nil, nil, errors.New("peer not allowed")
		}
		return sc, sc.RemotePubKey(), nil
	}
}

func identity(seed byte) ed25519.PrivateKey {
	return ed25519.NewKeyFromSeed(bytes.Repeat([]byte{seed}, 32))
}

func run(t *testing.T, serve func(ctx context.Context) error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- serve(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Errorf("signer returned %v", err)
		}
	})
}

func signBytes(t *testing.T, m signbytes.Message) []byte {
	t.Helper()
	b, err := m.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestClient(t *testing.T) {
	for _, d := range []privval.Dialect{privval.V038, privval.V034, privval.GnoTMKMS} {
		for _, network := range []string{"unix", "tcp"} {
			t.Run(d.String()+"/"+network, func(t *testing.T) {
				testClient(t, d, network)
			})
		}
	}
}

func testClient(t *testing.T, d privval.Dialect, network string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	g, pub := newGuard(t)
	ln, err := privvaltest.NewListener(network, d)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	cfg := privval.Config{Dialect: d, Network: ln.Network(), Address: ln.Address(), ChainID: chainID}
	node, signerID := identity(1), identity(2)
	if network == "tcp" {
		ln.Handshake = secretHandshake(node, secretconn.Merlin, signerID.Public().(ed25519.PublicKey))
		cfg.Handshake = secretHandshake(signerID, secretconn.Merlin, node.Public().(ed25519.PublicKey))
	}
	e, err := privval.NewEndpoint(g, cfg)
	if err != nil {
		t.Fatal(err)
	}
	run(t, e.Run)
	c, err := ln.Accept(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if network == "tcp" && !c.Peer().Equal(signerID.Public()) {
		t.Fatalf("peer %x", c.Peer())
	}

	if err := c.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	got, err := c.PubKey(ctx, chainID)
	if err != nil || !got.Equal(pub) {
		t.Fatalf("PubKey: %x, %v", got, err)
	}
	format := signbytes.CometBFT
	if d == privval.GnoTMKMS {
		format = signbytes.TM2
	}

	p := &privvaltest.Proposal{Height: 1, POLRound: -1, BlockID: blockID(1), Timestamp: t0}
	sp, err := c.SignProposal(ctx, chainID, p)
	if err != nil {
		t.Fatal(err)
	}
	sb := signBytes(t, signbytes.Message{Format: format, Phase: signbytes.Proposal, Height: 1, POLRound: -1, BlockID: p.BlockID, Timestamp: t0, ChainID: chainID})
	if !ed25519.Verify(pub, sb, sp.Signature) {
		t.Fatal("proposal signature does not verify")
	}

	for _, ph := range []signbytes.Phase{signbytes.Prevote, signbytes.Precommit} {
		v := &privvaltest.Vote{Phase: ph, Height: 1, BlockID: blockID(1), Timestamp: t0,
			ValidatorAddress: bytes.Repeat([]byte{0xaa}, 20), ValidatorIndex: 3}
		if d == privval.V038 && ph == signbytes.Precommit {
			v.Extension = []byte("ext")
		}
		sv, err := c.SignVote(ctx, chainID, v)
		if err != nil {
			t.Fatal(err)
		}
		sb := signBytes(t, signbytes.Message{Format: format, Phase: ph, Height: 1, BlockID: v.BlockID, Timestamp: t0, ChainID: chainID})
		if !ed25519.Verify(pub, sb, sv.Signature) {
			t.Fatalf("%v signature does not verify", ph)
		}
		if sv.Height != 1 || sv.ValidatorIndex != 3 || !bytes.Equal(sv.ValidatorAddress, v.ValidatorAddress) {
			t.Fatalf("vote came back changed: %+v", sv)
		}
		if d == privval.V038 && ph == signbytes.Precommit {
			eb := signBytes(t, signbytes.Message{Format: signbytes.CometBFT, Phase: signbytes.VoteExtension, Height: 1, ChainID: chainID, Extension: v.Extension})
			if !ed25519.Verify(pub, eb, sv.ExtensionSignature) {
				t.Fatal("extension signature does not verify")
			}
		}
	}

	// A timestamp-only change: the earlier signature and timestamp.
	later := &privvaltest.Vote{Phase: signbytes.Precommit, Height: 1, BlockID: blockID(1), Timestamp: t0.Add(time.Second)}
	if d == privval.V038 {
		later.Extension = []byte("ext")
	}
	sv, err := c.SignVote(ctx, chainID, later)
	if err != nil {
		t.Fatal(err)
	}
	if !sv.Timestamp.Equal(t0) {
		t.Fatalf("timestamp %v, want the earlier %v", sv.Timestamp, t0)
	}

	// A double sign: refused, and the connection still serves.
	_, err = c.SignVote(ctx, chainID, &privvaltest.Vote{Phase: signbytes.Prevote, Height: 1, BlockID: blockID(2), Timestamp: t0})
	var re *privvaltest.RemoteSignerError
	if !errors.As(err, &re) || re.Code != privval.CodeDoubleSign {
		t.Fatalf("double sign: %v", err)
	}
	_, err = c.PubKey(ctx, "other-chain")
	if !errors.As(err, &re) || re.Code != privval.CodeInvalidRequest {
		t.Fatalf("other chain: %v", err)
	}
	if err := c.Ping(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestNativeClient(t *testing.T) {
	for _, network := range []string{"unix", "tcp"} {
		t.Run(network, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			g, pub := newGuard(t)
			node, signerID := identity(1), identity(2)
			var cfg privval.ServerConfig
			var h privval.Handshake
			if network == "tcp" {
				cfg.Handshake = secretHandshake(signerID, secretconn.PreMerlin, node.Public().(ed25519.PublicKey))
				h = secretHandshake(node, secretconn.PreMerlin, signerID.Public().(ed25519.PublicKey))
			}
			s, err := privval.NewServer(g, cfg)
			if err != nil {
				t.Fatal(err)
			}
			// Here the signer listens and the node dials.
			nl, err := net.Listen(network, addrFor(t, network))
			if err != nil {
				t.Fatal(err)
			}
			run(t, func(ctx context.Context) error { return s.Serve(ctx, nl) })

			c, err := privvaltest.DialNative(ctx, nl.Addr().Network(), nl.Addr().String(), h)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if network == "tcp" && !c.Peer().Equal(signerID.Public()) {
				t.Fatalf("peer %x", c.Peer())
			}
			got, err := c.PubKey(ctx)
			if err != nil || !got.Equal(pub) {
				t.Fatalf("PubKey: %x, %v", got, err)
			}
			sb := signBytes(t, signbytes.Message{Format: signbytes.TM2, Phase: signbytes.Prevote, Height: 5, BlockID: blockID(1), Timestamp: t0, ChainID: chainID})
			sig, err := c.Sign(ctx, sb)
			if err != nil {
				t.Fatal(err)
			}
			if !ed25519.Verify(pub, sb, sig) {
				t.Fatal("signature does not verify")
			}
			conflict := signBytes(t, signbytes.Message{Format: signbytes.TM2, Phase: signbytes.Prevote, Height: 5, BlockID: blockID(2), Timestamp: t0, ChainID: chainID})
			_, err = c.Sign(ctx, conflict)
			var re *privvaltest.RemoteSignerError
			if !errors.As(err, &re) || re.Description == "" {
				t.Fatalf("double sign: %v", err)
			}
			if again, err := c.Sign(ctx, sb); err != nil || !bytes.Equal(again, sig) {
				t.Fatalf("repeat: %x, %v", again, err)
			}
		})
	}
}

func addrFor(t *testing.T, network string) string {
	if network == "tcp" {
		return "127.0.0.1:0"
	}
	// Unix socket paths are short; t.TempDir may be too long.
	dir, err := os.MkdirTemp("", "pvt")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	return filepath.Join(dir, "s")
}

// TestAcceptCancelled checks that Accept gives up when its context ends.
func TestAcceptCancelled(t *testing.T) {
	ln, err := privvaltest.NewListener("unix", privval.V038)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := ln.Accept(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Accept: %v", err)
	}
}

// TestCallCancelled checks that a call gives up when its context ends,
// against a signer that never answers.
func TestCallCancelled(t *testing.T) {
	ln, err := privvaltest.NewListener("tcp", privval.V034)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	conn, err := net.Dial(ln.Network(), ln.Address())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	c, err := ln.Accept(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(20*time.Millisecond, cancel)
	if err := c.Ping(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Ping: %v", err)
	}
}
