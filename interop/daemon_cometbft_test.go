package interop

import (
	"crypto/ed25519"
	"errors"
	"fmt"
	"testing"
	"time"

	cmted25519 "github.com/cometbft/cometbft/crypto/ed25519"
	cmtlog "github.com/cometbft/cometbft/libs/log"
	"github.com/cometbft/cometbft/privval"
	cmtproto "github.com/cometbft/cometbft/proto/tendermint/types"
	cmttypes "github.com/cometbft/cometbft/types"

	spv "github.com/signerkit/signerkit/privval"
)

// TestDaemonCometBFT: CometBFT v0.38's SignerListenerEndpoint behind its
// production TCPListener (SecretConnection), with SignerClient, against
// the signerkit binary (cometbft-v0.38) with the key in a simulated
// YubiHSM 2 and in a keybase: proposals, prevotes, precommits with vote
// extensions, each verified by CometBFT (VerifyVoteAndExtension) and by
// crypto/ed25519; a double sign refused; /metrics per phase. (The Ledger
// validator app signs votes and proposals only, not extensions: a Ledger
// cannot serve a v0.38 chain with vote extensions enabled.)
func TestDaemonCometBFT(t *testing.T) {
	for _, name := range []string{"yubihsmsim", "keybase"} {
		t.Run(name, func(t *testing.T) {
			b := newBackend(t, name, 0x73)
			nodeKey := pvIdentity(0x64)
			ln := pvListen(t, "tcp")
			cfgPath, _ := skSetup(t, "cometbft-v0.38", b.uri,
				fmt.Sprintf("  addr = \"tcp://%s\"\n  allow = [\"%x\"]", ln.Addr(), []byte(pvPub(nodeKey))))
			ep := privval.NewSignerListenerEndpoint(cmtlog.NewNopLogger(), privval.NewTCPListener(ln, cmted25519.PrivKey(nodeKey)))
			sc, err := privval.NewSignerClient(ep, skChain)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = ep.Stop() })
			p := skStart(t, cfgPath)
			if err := sc.WaitForConnection(20 * time.Second); err != nil {
				t.Fatal(err)
			}
			pk, err := sc.GetPubKey()
			if err != nil {
				t.Fatal(err)
			}
			if !b.pub.Equal(ed25519.PublicKey(pk.Bytes())) {
				t.Fatalf("public key %X", pk.Bytes())
			}
			ts := time.Now().UTC().Truncate(time.Millisecond)
			for h := int64(1); h <= skHeights; h++ {
				prop := &cmtproto.Proposal{Type: cmtproto.ProposalType, Height: h, PolRound: -1, BlockID: cmtBlockID(byte(h), 0, 1), Timestamp: ts}
				if err := sc.SignProposal(skChain, prop); err != nil {
					t.Fatal(err)
				}
				psb := cmttypes.ProposalSignBytes(skChain, prop)
				if !pk.VerifySignature(psb, prop.Signature) || !ed25519.Verify(b.pub, psb, prop.Signature) {
					t.Fatalf("height %d: proposal signature does not verify", h)
				}
				for _, typ := range []cmtproto.SignedMsgType{cmtproto.PrevoteType, cmtproto.PrecommitType} {
					pv := &cmtproto.Vote{Type: typ, Height: h, BlockID: cmtBlockID(byte(h), 0, 1), Timestamp: ts, ValidatorAddress: pk.Address()}
					if typ == cmtproto.PrecommitType {
						pv.Extension = []byte(fmt.Sprintf("extension %d", h))
					}
					if err := sc.SignVote(skChain, pv); err != nil {
						t.Fatalf("height %d %v: %v", h, typ, err)
					}
					v, err := cmttypes.VoteFromProto(pv)
					if err != nil {
						t.Fatal(err)
					}
					if typ == cmtproto.PrecommitType {
						err = v.VerifyVoteAndExtension(skChain, pk)
					} else {
						err = v.Verify(skChain, pk)
					}
					if err != nil {
						t.Fatalf("height %d %v: CometBFT's verification: %v", h, typ, err)
					}
					if !ed25519.Verify(b.pub, cmttypes.VoteSignBytes(skChain, pv), pv.Signature) {
						t.Fatalf("height %d %v: crypto/ed25519", h, typ)
					}
				}
			}
			conflict := &cmtproto.Vote{Type: cmtproto.PrevoteType, Height: skHeights, BlockID: cmtBlockID(0xee, 0, 1), Timestamp: ts, ValidatorAddress: pk.Address()}
			err = sc.SignVote(skChain, conflict)
			var rse *privval.RemoteSignerError
			if !errors.As(err, &rse) || rse.Code != int(spv.CodeDoubleSign) {
				t.Fatalf("conflicting prevote: %v (%T)", err, err)
			}
			if err := sc.Ping(); err != nil {
				t.Fatalf("ping after the refusal: %v", err)
			}
			checkPhaseCounts(t, p, skHeights, 1)
			// Each precommit for a block is two backend signs: the vote
			// and its extension.
			if v := p.metric(t, "signerkit_backend_sign_duration_seconds_count", "chain", skChain, "phase", "precommit"); v != 2*skHeights {
				t.Errorf("backend signs for precommits: %v, want %d", v, 2*skHeights)
			}
			p.stop(t)
		})
	}
}
