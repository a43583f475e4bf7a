package interop

import (
	"bytes"
	"crypto/ed25519"
	"errors"
	"net"
	"testing"
	"time"

	cmted25519 "github.com/cometbft/cometbft/crypto/ed25519"
	cmtlog "github.com/cometbft/cometbft/libs/log"
	"github.com/cometbft/cometbft/privval"
	cmtproto "github.com/cometbft/cometbft/proto/tendermint/types"
	cmttypes "github.com/cometbft/cometbft/types"

	spv "github.com/signerkit/signerkit/privval"
)

// CometBFT v0.38.26's own node side, SignerListenerEndpoint with
// SignerClient, against our Endpoint: public key, prevote, precommit with
// its extension, proposal, a repeat and a timestamp-only change, and a
// double sign refused with the connection kept. Every signature is
// checked by CometBFT's own verification and by crypto/ed25519.
//
// Over Unix the listener is CometBFT's UnixListener, as a node with
// priv_validator_laddr = "unix://…" runs it. Over TCP a node wraps its
// listener in SecretConnection (privval.TCPListener): that is
// TestPrivvalCometBFTSecretConnection; the "tcp" case here runs the same
// SignerListenerEndpoint on a plain TCP listener.
func TestPrivvalCometBFT(t *testing.T) {
	for _, network := range []string{"unix", "tcp"} {
		t.Run(network, func(t *testing.T) { testPrivvalCometBFT(t, network, nil) })
	}
}

// testPrivvalCometBFT runs the checks over network. With nodeKey, the
// node's listener is CometBFT's privval.TCPListener with that identity,
// and our Endpoint runs privval.SecretConnection allowing only it.
func testPrivvalCometBFT(t *testing.T, network string, nodeKey ed25519.PrivateKey) {
	ln := pvListen(t, network)
	var l net.Listener = ln
	var opts []func(*spv.Config)
	switch {
	case network == "unix":
		l = privval.NewUnixListener(ln)
	case nodeKey != nil:
		l = privval.NewTCPListener(ln, cmted25519.PrivKey(nodeKey))
		opts = append(opts, func(c *spv.Config) {
			c.Handshake = spv.SecretConnection(pvIdentity(0x57), []ed25519.PublicKey{pvPub(nodeKey)})
			c.OnRequest = peerChecker(t, pvPub(nodeKey))
		})
	}
	ep := privval.NewSignerListenerEndpoint(cmtlog.NewNopLogger(), l)
	sc, err := privval.NewSignerClient(ep, pvChain)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ep.Stop() })

	k := newKey(7)
	ours := pvRun(t, pvGuard(t, k), spv.V038, network, ln.Addr().String(), opts...)
	if err := sc.WaitForConnection(10 * time.Second); err != nil {
		t.Fatal(err)
	}

	pk, err := sc.GetPubKey()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(pk.Bytes(), k.priv.Public().(ed25519.PublicKey)) {
		t.Fatalf("public key %X", pk.Bytes())
	}
	pub := k.priv.Public().(ed25519.PublicKey)
	addr := pk.Address()
	ts := time.Date(2026, 12, 1, 10, 0, 0, 5000, time.UTC)

	// Height 1: proposal, prevote, precommit with an extension.
	prop := &cmtproto.Proposal{Type: cmtproto.ProposalType, Height: 1, Round: 0, PolRound: -1, BlockID: cmtBlockID(1, 0, 1), Timestamp: ts}
	if err := sc.SignProposal(pvChain, prop); err != nil {
		t.Fatal(err)
	}
	psb := cmttypes.ProposalSignBytes(pvChain, prop)
	if !pk.VerifySignature(psb, prop.Signature) || !ed25519.Verify(pub, psb, prop.Signature) {
		t.Fatal("proposal signature does not verify")
	}

	vote := func(typ cmtproto.SignedMsgType, h int64, block byte, ext string) *cmtproto.Vote {
		v := &cmtproto.Vote{Type: typ, Height: h, Round: 0, BlockID: cmtBlockID(block, 0, 1), Timestamp: ts.Add(time.Duration(h) * time.Second),
			ValidatorAddress: addr, ValidatorIndex: 0}
		if ext != "" {
			v.Extension = []byte(ext)
		}
		return v
	}
	check := func(name string, pv *cmtproto.Vote) {
		t.Helper()
		v, err := cmttypes.VoteFromProto(pv)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if err := v.ValidateBasic(); err != nil {
			t.Fatalf("%s: ValidateBasic: %v", name, err)
		}
		if pv.Type == cmtproto.PrecommitType && !cmtBlockIDIsZero(pv.BlockID) {
			if err := v.VerifyVoteAndExtension(pvChain, pk); err != nil {
				t.Fatalf("%s: VerifyVoteAndExtension: %v", name, err)
			}
			if !ed25519.Verify(pub, cmttypes.VoteExtensionSignBytes(pvChain, pv), pv.ExtensionSignature) {
				t.Fatalf("%s: extension signature (crypto/ed25519)", name)
			}
		} else if err := v.Verify(pvChain, pk); err != nil {
			t.Fatalf("%s: Verify: %v", name, err)
		}
		if !ed25519.Verify(pub, cmttypes.VoteSignBytes(pvChain, pv), pv.Signature) {
			t.Fatalf("%s: signature (crypto/ed25519)", name)
		}
	}

	prevote := vote(cmtproto.PrevoteType, 1, 1, "")
	if err := sc.SignVote(pvChain, prevote); err != nil {
		t.Fatal(err)
	}
	check("prevote", prevote)

	precommit := vote(cmtproto.PrecommitType, 1, 1, "extension data")
	want := *precommit
	if err := sc.SignVote(pvChain, precommit); err != nil {
		t.Fatal(err)
	}
	check("precommit", precommit)
	if !bytes.Equal(precommit.Extension, want.Extension) || precommit.Height != 1 || !precommit.Timestamp.Equal(want.Timestamp) {
		t.Fatalf("precommit changed: %+v", precommit)
	}

	// The node asks again after a crash, with a new timestamp: the same
	// signature, the old timestamp.
	again := want
	again.Timestamp = want.Timestamp.Add(3 * time.Second)
	if err := sc.SignVote(pvChain, &again); err != nil {
		t.Fatal(err)
	}
	check("precommit again", &again)
	if !again.Timestamp.Equal(want.Timestamp) || !bytes.Equal(again.Signature, precommit.Signature) {
		t.Fatalf("timestamp-only change: got %v %X, want %v %X", again.Timestamp, again.Signature, want.Timestamp, precommit.Signature)
	}

	// A double sign: a precommit for another block at the same height
	// and round. CometBFT's client gets a RemoteSignerError.
	conflict := vote(cmtproto.PrecommitType, 1, 2, "")
	err = sc.SignVote(pvChain, conflict)
	var rse *privval.RemoteSignerError
	if !errors.As(err, &rse) || rse.Code != int(spv.CodeDoubleSign) || len(conflict.Signature) != 0 {
		t.Fatalf("conflicting precommit: %v (%T), signature %X", err, err, conflict.Signature)
	}
	// A proposal below the state, too.
	if err := sc.SignProposal(pvChain, &cmtproto.Proposal{Type: cmtproto.ProposalType, Height: 1, PolRound: -1, BlockID: cmtBlockID(2, 0, 1), Timestamp: ts}); !errors.As(err, &rse) {
		t.Fatalf("proposal regression: %v", err)
	}
	// The connection is kept: the next height signs on it.
	if err := sc.Ping(); err != nil {
		t.Fatal(err)
	}
	next := vote(cmtproto.PrevoteType, 2, 1, "")
	if err := sc.SignVote(pvChain, next); err != nil {
		t.Fatal(err)
	}
	check("next prevote", next)
	nilPrecommit := vote(cmtproto.PrecommitType, 2, 0, "")
	if err := sc.SignVote(pvChain, nilPrecommit); err != nil {
		t.Fatal(err)
	}
	check("nil precommit", nilPrecommit)
	if len(nilPrecommit.ExtensionSignature) != 0 {
		t.Fatal("a nil precommit got an extension signature")
	}
	if st := ours.Stats(); st.Connections != 1 || st.Refused != 2 || st.ProtocolErrors != 0 {
		t.Fatalf("our endpoint's stats: %+v", st)
	}
}

// TestPrivvalCometBFTSecretConnection is CometBFT's production TCP path:
// privval.TCPListener runs SecretConnection (Merlin) on every accepted
// connection, and our Endpoint runs privval.SecretConnection with the
// node's identity on its allowlist. CometBFT checks no allowlist of its
// own; a node whose identity is not on ours is refused by our Endpoint,
// which dials again and never answers it.
func TestPrivvalCometBFTSecretConnection(t *testing.T) {
	nodeKey := pvIdentity(0x47)
	t.Run("allowed", func(t *testing.T) { testPrivvalCometBFT(t, "tcp", nodeKey) })
	t.Run("node not allowed", func(t *testing.T) {
		ln := pvListen(t, "tcp")
		ep := privval.NewSignerListenerEndpoint(cmtlog.NewNopLogger(), privval.NewTCPListener(ln, cmted25519.PrivKey(nodeKey)),
			privval.SignerListenerEndpointTimeoutReadWrite(500*time.Millisecond))
		sc, err := privval.NewSignerClient(ep, pvChain)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = ep.Stop() })
		var dis disconnects
		other := pvPub(pvIdentity(0x48))
		ours := pvRun(t, pvGuard(t, newKey(7)), spv.V038, "tcp", ln.Addr().String(), func(c *spv.Config) {
			c.Handshake = spv.SecretConnection(pvIdentity(0x57), []ed25519.PublicKey{other})
			c.OnDisconnect = dis.add
		})
		// Refused, and refused again on the next dial.
		dis.wait(t, 2, unauthorized(pvPub(nodeKey)))
		if pk, err := sc.GetPubKey(); err == nil {
			t.Fatalf("the node got public key %X from a signer that refused it", pk.Bytes())
		}
		if st := ours.Stats(); st.Connections != 0 || st.Requests != 0 {
			t.Fatalf("our endpoint's stats: %+v", st)
		}
	})
}
