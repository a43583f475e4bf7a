package interop

import (
	"crypto/ed25519"
	"errors"
	"net"
	"testing"
	"time"

	tmed25519 "github.com/tendermint/tendermint/crypto/ed25519"
	tmlog "github.com/tendermint/tendermint/libs/log"
	tmprivval "github.com/tendermint/tendermint/privval"
	tmproto "github.com/tendermint/tendermint/proto/tendermint/types"
	tmtypes "github.com/tendermint/tendermint/types"

	spv "github.com/signerkit/signerkit/privval"
)

// CometBFT v0.34.35's node side (module path
// github.com/tendermint/tendermint) against our Endpoint in the V034
// dialect: public key, proposal, prevote, precommit, a timestamp-only
// change, and a double sign refused with the connection kept. Over
// "tcp+secretconnection" the listener is v0.34's privval.TCPListener, as a
// node with priv_validator_laddr = "tcp://…" runs it, and our Endpoint
// runs privval.SecretConnection with the node's identity on its allowlist.
func TestPrivvalCometBFT034(t *testing.T) {
	for _, tc := range []string{"unix", "tcp", "tcp+secretconnection"} {
		t.Run(tc, func(t *testing.T) {
			network, secret := tc, false
			if tc == "tcp+secretconnection" {
				network, secret = "tcp", true
			}
			ln := pvListen(t, network)
			var l net.Listener = ln
			var opts []func(*spv.Config)
			switch {
			case network == "unix":
				l = tmprivval.NewUnixListener(ln)
			case secret:
				nodeKey := pvIdentity(0x4a)
				l = tmprivval.NewTCPListener(ln, tmed25519.PrivKey(nodeKey))
				opts = append(opts, func(c *spv.Config) {
					c.Handshake = spv.SecretConnection(pvIdentity(0x5a), []ed25519.PublicKey{pvPub(nodeKey)})
					c.OnRequest = peerChecker(t, pvPub(nodeKey))
				})
			}
			ep := tmprivval.NewSignerListenerEndpoint(tmlog.NewNopLogger(), l)
			sc, err := tmprivval.NewSignerClient(ep, pvChain)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = ep.Stop() })
			k := newKey(10)
			pub := k.priv.Public().(ed25519.PublicKey)
			ours := pvRun(t, pvGuard(t, k), spv.V034, network, ln.Addr().String(), opts...)
			if err := sc.WaitForConnection(10 * time.Second); err != nil {
				t.Fatal(err)
			}
			pk, err := sc.GetPubKey()
			if err != nil || string(pk.Bytes()) != string(pub) {
				t.Fatalf("public key %v, %v", pk, err)
			}
			ts := time.Date(2026, 12, 1, 10, 0, 0, 5000, time.UTC)
			prop := &tmproto.Proposal{Type: tmproto.ProposalType, Height: 1, PolRound: -1, BlockID: tmBlockID(1, 0, 1), Timestamp: ts}
			if err := sc.SignProposal(pvChain, prop); err != nil {
				t.Fatal(err)
			}
			if sb := tmtypes.ProposalSignBytes(pvChain, prop); !pk.VerifySignature(sb, prop.Signature) || !ed25519.Verify(pub, sb, prop.Signature) {
				t.Fatal("proposal signature")
			}
			var first *tmproto.Vote
			for i, typ := range []tmproto.SignedMsgType{tmproto.PrevoteType, tmproto.PrecommitType, tmproto.PrecommitType} {
				v := &tmproto.Vote{Type: typ, Height: 1, BlockID: tmBlockID(1, 0, 1), Timestamp: ts.Add(time.Duration(i) * time.Second),
					ValidatorAddress: pk.Address()}
				if err := sc.SignVote(pvChain, v); err != nil {
					t.Fatal(err)
				}
				tv, err := tmtypes.VoteFromProto(v)
				if err != nil {
					t.Fatal(err)
				}
				if err := tv.Verify(pvChain, pk); err != nil {
					t.Fatal(err)
				}
				if !ed25519.Verify(pub, tmtypes.VoteSignBytes(pvChain, v), v.Signature) {
					t.Fatal("crypto/ed25519")
				}
				if i == 1 {
					first = v
				}
				if i == 2 && (!v.Timestamp.Equal(first.Timestamp) || string(v.Signature) != string(first.Signature)) {
					t.Fatalf("timestamp-only change: %v, want %v", v.Timestamp, first.Timestamp)
				}
			}
			conflict := &tmproto.Vote{Type: tmproto.PrecommitType, Height: 1, BlockID: tmBlockID(2, 0, 1), Timestamp: ts, ValidatorAddress: pk.Address()}
			var rse *tmprivval.RemoteSignerError
			if err := sc.SignVote(pvChain, conflict); !errors.As(err, &rse) || rse.Code != int(spv.CodeDoubleSign) {
				t.Fatalf("conflicting precommit: %v", err)
			}
			if err := sc.Ping(); err != nil {
				t.Fatal(err)
			}
			if st := ours.Stats(); st.Connections != 1 || st.Refused != 1 || st.ProtocolErrors != 0 {
				t.Fatalf("our endpoint's stats: %+v", st)
			}
		})
	}
}
