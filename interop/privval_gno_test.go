package interop

import (
	"context"
	"crypto/ed25519"
	"errors"
	"io"
	"log/slog"
	"net"
	"path/filepath"
	"testing"
	"time"

	gnoprivval "github.com/gnolang/gno/tm2/pkg/bft/privval"
	"github.com/gnolang/gno/tm2/pkg/bft/privval/signer/remote"
	"github.com/gnolang/gno/tm2/pkg/bft/privval/signer/remote/client"
	"github.com/gnolang/gno/tm2/pkg/bft/privval/upstream"
	gnotypes "github.com/gnolang/gno/tm2/pkg/bft/types"
	gnoed25519 "github.com/gnolang/gno/tm2/pkg/crypto/ed25519"

	spv "github.com/signerkit/signerkit/privval"
)

func nopSlog() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// gnoChecks signs through pv, a gno node's PrivValidator (the tmkms
// SignerClient, or PrivValidator over the native remote signer client), a
// proposal, a prevote and a precommit at height 1, the precommit again
// with a later timestamp (the earlier one and the same signature come
// back), and a prevote at height 2, each checked by gno's own verification
// and by crypto/ed25519.
func gnoChecks(t *testing.T, pv gnotypes.PrivValidator, k *edKey) {
	pk := pv.PubKey()
	pub := k.priv.Public().(ed25519.PublicKey)
	if !gnoKeyOf(k).PubKey().Equals(pk) {
		t.Fatalf("public key %v", pk)
	}
	addr := pk.Address()
	ts := time.Date(2026, 12, 1, 10, 0, 0, 5000, time.UTC)

	prop := &gnotypes.Proposal{Type: gnotypes.ProposalType, Height: 1, Round: 0, POLRound: -1, BlockID: gnoBlockID(1, 0, 1), Timestamp: ts}
	if err := pv.SignProposal(pvChain, prop); err != nil {
		t.Fatal(err)
	}
	if !pk.VerifyBytes(prop.SignBytes(pvChain), prop.Signature) || !ed25519.Verify(pub, prop.SignBytes(pvChain), prop.Signature) {
		t.Fatal("proposal signature does not verify")
	}
	if err := prop.ValidateBasic(); err != nil {
		t.Fatal(err)
	}

	vote := func(typ gnotypes.SignedMsgType, h int64, block byte) *gnotypes.Vote {
		return &gnotypes.Vote{Type: typ, Height: h, Round: 0, BlockID: gnoBlockID(block, 0, 1),
			Timestamp: ts.Add(time.Duration(h) * time.Second), ValidatorAddress: addr, ValidatorIndex: 0}
	}
	check := func(name string, v *gnotypes.Vote) {
		t.Helper()
		if err := v.ValidateBasic(); err != nil {
			t.Fatalf("%s: ValidateBasic: %v", name, err)
		}
		if err := v.Verify(pvChain, pk); err != nil {
			t.Fatalf("%s: Verify: %v", name, err)
		}
		if !ed25519.Verify(pub, v.SignBytes(pvChain), v.Signature) {
			t.Fatalf("%s: crypto/ed25519", name)
		}
	}
	prevote := vote(gnotypes.PrevoteType, 1, 1)
	if err := pv.SignVote(pvChain, prevote); err != nil {
		t.Fatal(err)
	}
	check("prevote", prevote)
	precommit := vote(gnotypes.PrecommitType, 1, 1)
	if err := pv.SignVote(pvChain, precommit); err != nil {
		t.Fatal(err)
	}
	check("precommit", precommit)
	again := vote(gnotypes.PrecommitType, 1, 1)
	again.Timestamp = again.Timestamp.Add(time.Second)
	if err := pv.SignVote(pvChain, again); err != nil {
		t.Fatal(err)
	}
	check("precommit again", again)
	if !again.Timestamp.Equal(precommit.Timestamp) || string(again.Signature) != string(precommit.Signature) {
		t.Fatalf("timestamp-only change: %v, want %v", again.Timestamp, precommit.Timestamp)
	}
	next := vote(gnotypes.PrevoteType, 2, 2)
	if err := pv.SignVote(pvChain, next); err != nil {
		t.Fatal(err)
	}
	check("next prevote", next)
}

// gno v1.7.1's tmkms_listener node side (upstream.SignerListenerEndpoint
// with upstream.SignerClient, the v0.34 protocol) against our Endpoint in
// the GnoTMKMS dialect. Over Unix the listener is gno's UnixListener, as a
// node with listen_addr = "unix://…" runs it. Over TCP gno's TCPListener
// requires SecretConnection: that is TestPrivvalGnoTMKMSSecretConnection;
// the "tcp" case here runs the same SignerListenerEndpoint on a plain TCP
// listener.
func TestPrivvalGnoTMKMS(t *testing.T) {
	for _, network := range []string{"unix", "tcp"} {
		t.Run(network, func(t *testing.T) {
			ln := pvListen(t, network)
			var l net.Listener = ln
			if network == "unix" {
				l = upstream.NewUnixListener(ln.(*net.UnixListener))
			}
			ep := upstream.NewSignerListenerEndpoint(nopSlog(), l)
			sc, err := upstream.NewSignerClient(ep, pvChain)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = sc.Close() })
			k := newKey(8)
			ours := pvRun(t, pvGuard(t, k), spv.GnoTMKMS, network, ln.Addr().String())
			gnoTMKMSChecks(t, sc, ours, k)
		})
	}
}

// gnoTMKMSChecks runs gnoChecks through sc, gno's tmkms SignerClient,
// then double signs refused with the connection kept.
func gnoTMKMSChecks(t *testing.T, sc *upstream.SignerClient, ours *spv.Endpoint, k *edKey) {
	t.Helper()
	if err := sc.Init(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	gnoChecks(t, sc, k)

	// Double signs: a conflicting prevote at height 2, and a proposal
	// below the state. gno's client gets the RemoteSignerError; the
	// connection is kept.
	conflict := &gnotypes.Vote{Type: gnotypes.PrevoteType, Height: 2, BlockID: gnoBlockID(3, 0, 1),
		Timestamp: time.Now().UTC(), ValidatorAddress: sc.PubKey().Address()}
	err := sc.SignVote(pvChain, conflict)
	var rse *upstream.WrappedRemoteSignerError
	if !errors.As(err, &rse) || rse.Code != int32(spv.CodeDoubleSign) || conflict.Signature != nil {
		t.Fatalf("conflicting prevote: %v (%T)", err, err)
	}
	err = sc.SignProposal(pvChain, &gnotypes.Proposal{Type: gnotypes.ProposalType, Height: 1, POLRound: -1, BlockID: gnoBlockID(1, 0, 1), Timestamp: time.Now().UTC()})
	if !errors.As(err, &rse) {
		t.Fatalf("proposal regression: %v", err)
	}
	if !sc.IsConnected() {
		t.Fatal("gno's endpoint dropped the connection after a refusal")
	}
	if err := sc.Ping(); err != nil {
		t.Fatal(err)
	}
	if st := ours.Stats(); st.Connections != 1 || st.Refused != 2 || st.ProtocolErrors != 0 {
		t.Fatalf("our endpoint's stats: %+v", st)
	}
}

// TestPrivvalGnoTMKMSSecretConnection is gno's production TCP path:
// upstream.TCPListener runs SecretConnection (Merlin) and checks
// allowed_kms_pubkeys, and our Endpoint runs privval.SecretConnection
// with the node's identity on its allowlist. With our identity not in
// allowed_kms_pubkeys, gno drops every connection and gets no key.
func TestPrivvalGnoTMKMSSecretConnection(t *testing.T) {
	nodeKey, ourID := pvIdentity(0x28), pvIdentity(0x38)
	listen := func(t *testing.T, allowed ed25519.PublicKey) (*upstream.SignerClient, string) {
		ln := pvListen(t, "tcp")
		l := upstream.NewTCPListener(ln.(*net.TCPListener), gnoed25519.PrivKeyEd25519(nodeKey),
			[]gnoed25519.PubKeyEd25519{gnoed25519.PubKeyEd25519(allowed)})
		sc, err := upstream.NewSignerClient(upstream.NewSignerListenerEndpoint(nopSlog(), l), pvChain)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = sc.Close() })
		return sc, ln.Addr().String()
	}
	t.Run("allowed", func(t *testing.T) {
		sc, addr := listen(t, pvPub(ourID))
		k := newKey(8)
		ours := pvRun(t, pvGuard(t, k), spv.GnoTMKMS, "tcp", addr, func(c *spv.Config) {
			c.Handshake = spv.SecretConnection(ourID, []ed25519.PublicKey{pvPub(nodeKey)})
			c.OnRequest = peerChecker(t, pvPub(nodeKey))
		})
		gnoTMKMSChecks(t, sc, ours, k)
	})
	t.Run("signer not allowed", func(t *testing.T) {
		sc, addr := listen(t, pvPub(pvIdentity(0x39)))
		var dis disconnects
		ours := pvRun(t, pvGuard(t, newKey(8)), spv.GnoTMKMS, "tcp", addr, func(c *spv.Config) {
			c.Handshake = spv.SecretConnection(ourID, []ed25519.PublicKey{pvPub(nodeKey)})
			c.OnDisconnect = dis.add
		})
		// Our handshake completes (gno's key is on our allowlist); gno
		// then checks ours and closes, again on every dial.
		dis.wait(t, 2, func(error) bool { return true })
		if err := sc.Init(time.Second); err == nil {
			t.Fatal("gno accepted a signer not in allowed_kms_pubkeys")
		}
		if st := ours.Stats(); st.Connections < 1 || st.Requests != 0 {
			t.Fatalf("our endpoint's stats: %+v", st)
		}
	})
}

// gno v1.7.1's native remote signer client
// (tm2/pkg/bft/privval/signer/remote/client), as a node with
// remote_signer.server_address = "unix://…" runs it, under gno's
// PrivValidator (tm2's FileState, as the node keeps it), against our
// Server. Over TCP gno's client runs tm2's SecretConnection: that is
// TestPrivvalGnoNativeSecretConnection.
func TestPrivvalGnoNative(t *testing.T) {
	ln := pvListen(t, "unix")
	k := newKey(9)
	ours := pvServe(t, pvGuard(t, k), ln)
	gnoNativeChecks(t, ours, spv.Stats{}, k, "unix://"+ln.Addr().String())
}

// gnoNativeClient connects gno's native client to addr.
func gnoNativeClient(ctx context.Context, addr string, opts ...client.Option) (*client.RemoteSignerClient, error) {
	opts = append([]client.Option{client.WithDialMaxRetries(10), client.WithDialRetryInterval(20 * time.Millisecond),
		client.WithRequestTimeout(5 * time.Second)}, opts...)
	return client.NewRemoteSignerClient(ctx, addr, nopSlog(), opts...)
}

// gnoNativeChecks runs gnoChecks through gno's PrivValidator over a native
// client to addr, then a second node's double sign and a sign for another
// chain, both refused with the connections kept. base is our Server's
// Stats before.
func gnoNativeChecks(t *testing.T, ours *spv.Server, base spv.Stats, k *edKey, addr string, opts ...client.Option) {
	t.Helper()
	newClient := func() *client.RemoteSignerClient {
		c, err := gnoNativeClient(context.Background(), addr, opts...)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
		return c
	}
	c := newClient()
	pv, err := gnoprivval.NewPrivValidator(c, filepath.Join(t.TempDir(), "state.json"))
	if err != nil {
		t.Fatal(err)
	}
	gnoChecks(t, pv, k)

	// A second node with the same key and its own fresh state, as after a
	// copied key: its FileState lets it sign height 1 again, our guard
	// refuses, and gno's client returns the signer's error.
	pv2, err := gnoprivval.NewPrivValidator(newClient(), filepath.Join(t.TempDir(), "state.json"))
	if err != nil {
		t.Fatal(err)
	}
	conflict := &gnotypes.Vote{Type: gnotypes.PrevoteType, Height: 1, BlockID: gnoBlockID(2, 0, 1),
		Timestamp: time.Now().UTC(), ValidatorAddress: pv2.PubKey().Address()}
	err = pv2.SignVote(pvChain, conflict)
	if !errors.Is(err, client.ErrResponseContainsError) || conflict.Signature != nil {
		t.Fatalf("second node's conflicting prevote: %v", err)
	}
	// The raw client too, on sign bytes of another chain: refused.
	other := &gnotypes.Vote{Type: gnotypes.PrevoteType, Height: 5, BlockID: gnoBlockID(2, 0, 1), Timestamp: time.Now().UTC()}
	if _, err := c.Sign(other.SignBytes("another-chain")); !errors.Is(err, client.ErrResponseContainsError) {
		t.Fatalf("other chain: %v", err)
	}
	// The connections stayed up: the first node signs on.
	next := &gnotypes.Vote{Type: gnotypes.PrecommitType, Height: 2, BlockID: gnoBlockID(2, 0, 1),
		Timestamp: time.Now().UTC(), ValidatorAddress: pv.PubKey().Address()}
	if err := pv.SignVote(pvChain, next); err != nil {
		t.Fatal(err)
	}
	if err := next.Verify(pvChain, pv.PubKey()); err != nil {
		t.Fatal(err)
	}
	if !ed25519.Verify(k.priv.Public().(ed25519.PublicKey), next.SignBytes(pvChain), next.Signature) {
		t.Fatal("next precommit: crypto/ed25519")
	}
	if st := ours.Stats(); st.Connections-base.Connections != 2 || st.Refused-base.Refused != 2 || st.ProtocolErrors != base.ProtocolErrors {
		t.Fatalf("our server's stats: %+v, before %+v", st, base)
	}
}

// TestPrivvalGnoNativeSecretConnection is gno's native protocol over TCP:
// gno's client (remote_signer.server_address = "tcp://…", with its own
// identity and tcp_authorized_keys) runs tm2's pre-Merlin SecretConnection,
// and our Server privval.LegacySecretConnection with the node's identity
// on its allowlist. A node not on our allowlist is refused and the
// Server serves on; a node that does not authorize our identity refuses
// us.
func TestPrivvalGnoNativeSecretConnection(t *testing.T) {
	nodeKey, ourID := pvIdentity(0x29), pvIdentity(0x39)
	nodeOpt := client.WithClientPrivKey(gnoed25519.PrivKeyEd25519(nodeKey))
	authOpt := client.WithAuthorizedKeys([]gnoed25519.PubKeyEd25519{gnoed25519.PubKeyEd25519(pvPub(ourID))})
	ln := pvListen(t, "tcp")
	addr := "tcp://" + ln.Addr().String()
	k := newKey(9)
	var dis disconnects
	ours := pvServe(t, pvGuard(t, k), ln, func(c *spv.ServerConfig) {
		c.Handshake = spv.LegacySecretConnection(ourID, []ed25519.PublicKey{pvPub(nodeKey)})
		c.OnRequest = peerChecker(t, pvPub(nodeKey))
		c.OnDisconnect = dis.add
	})

	t.Run("node not allowed", func(t *testing.T) {
		// gno's client completes its side of the handshake, loses the
		// connection on its first request and dials again, with no
		// backoff, until its context ends.
		stranger := pvIdentity(0x2a)
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		c, err := gnoNativeClient(ctx, addr, client.WithClientPrivKey(gnoed25519.PrivKeyEd25519(stranger)), authOpt,
			client.WithDialMaxRetries(0))
		if err == nil {
			_ = c.Close()
			t.Fatal("a node not on our allowlist got our public key")
		}
		dis.wait(t, 1, unauthorized(pvPub(stranger)))
	})
	t.Run("signer not authorized by the node", func(t *testing.T) {
		_, err := gnoNativeClient(context.Background(), addr, nodeOpt,
			client.WithAuthorizedKeys([]gnoed25519.PubKeyEd25519{gnoed25519.PubKeyEd25519(pvPub(pvIdentity(0x3a)))}),
			client.WithDialMaxRetries(0))
		if !errors.Is(err, remote.ErrUnauthorizedPubKey) {
			t.Fatalf("want remote.ErrUnauthorizedPubKey, got %v", err)
		}
		// Our side completed the handshake (the node's key is on our
		// allowlist) before gno checked ours and hung up.
		for deadline := time.Now().Add(10 * time.Second); ours.Stats().Connections != 1; time.Sleep(5 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("our server's stats: %+v", ours.Stats())
			}
		}
	})
	if st := ours.Stats(); st.Requests != 0 {
		t.Fatalf("our server answered a refused node: %+v", st)
	}
	// The Server serves on: the allowed node, after the refusals.
	t.Run("allowed", func(t *testing.T) {
		gnoNativeChecks(t, ours, ours.Stats(), k, addr, nodeOpt, authOpt)
	})
}
