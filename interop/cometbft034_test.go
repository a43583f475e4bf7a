package interop

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"

	tmed25519 "github.com/tendermint/tendermint/crypto/ed25519"
	tmprivval "github.com/tendermint/tendermint/privval"
	tmproto "github.com/tendermint/tendermint/proto/tendermint/types"
	tmtypes "github.com/tendermint/tendermint/types"

	"github.com/signerkit/signerkit/guard"
	"github.com/signerkit/signerkit/signbytes"
	"github.com/signerkit/signerkit/signer"
)

// CometBFT v0.34 keeps the module path github.com/tendermint/tendermint;
// go.mod replaces it with github.com/cometbft/cometbft v0.34.35, which is
// how CometBFT v0.34 is consumed.

func tmBlockID(tag, salt byte, total uint32) tmproto.BlockID {
	if tag == 0 {
		return tmproto.BlockID{}
	}
	return tmproto.BlockID{Hash: hash(tag, salt), PartSetHeader: tmproto.PartSetHeader{Total: total, Hash: hash(tag^0xff, salt)}}
}

func tmOurBlockID(id tmproto.BlockID) signbytes.BlockID {
	if len(id.Hash) == 0 && id.PartSetHeader.Total == 0 && len(id.PartSetHeader.Hash) == 0 {
		return signbytes.BlockID{}
	}
	return signbytes.BlockID{Hash: id.Hash, PartSetHeader: signbytes.PartSetHeader{Total: id.PartSetHeader.Total, Hash: id.PartSetHeader.Hash}}
}

var tmTypes = map[signbytes.Phase]tmproto.SignedMsgType{
	signbytes.Prevote: tmproto.PrevoteType, signbytes.Precommit: tmproto.PrecommitType, signbytes.Proposal: tmproto.ProposalType,
}

// CometBFT v0.34.35's own VoteSignBytes and ProposalSignBytes against
// ParseCometBFT and Message.Bytes.
func TestCometBFT034SignBytes(t *testing.T) {
	rng := rand.New(rand.NewPCG(34, 35))
	for i := 0; i < 3000; i++ {
		chainID := []string{"cosmoshub-4", "c", "test11"}[rng.IntN(3)]
		h := rng.Int64N(1 << 40)
		r := rng.Int32N(4)
		id := tmBlockID(byte(rng.IntN(4)), byte(i), uint32(rng.IntN(5)))
		if rng.IntN(20) == 0 && len(id.Hash) > 0 {
			id.PartSetHeader = tmproto.PartSetHeader{}
		}
		ts := randomTime(rng)
		phase := []signbytes.Phase{signbytes.Prevote, signbytes.Precommit}[rng.IntN(2)]
		vote := &tmproto.Vote{Type: tmTypes[phase], Height: h, Round: r, BlockID: id, Timestamp: ts, ValidatorIndex: 1}
		checkParity(t, "v0.34 vote", tmtypes.VoteSignBytes(chainID, vote),
			signbytes.Message{Phase: phase, Height: h, Round: int64(r), BlockID: tmOurBlockID(id), Timestamp: ts, ChainID: chainID})
		pol := rng.Int32N(r+2) - 1
		prop := &tmproto.Proposal{Type: tmproto.ProposalType, Height: h, Round: r, PolRound: pol, BlockID: id, Timestamp: ts}
		checkParity(t, "v0.34 proposal", tmtypes.ProposalSignBytes(chainID, prop),
			signbytes.Message{Phase: signbytes.Proposal, Height: h, Round: int64(r), POLRound: int64(pol), BlockID: tmOurBlockID(id), Timestamp: ts, ChainID: chainID})
	}
}

// The Guard and CometBFT v0.34.35's FilePV agree request by request.
func TestCometBFT034FilePVAgrees(t *testing.T) {
	ctx := context.Background()
	const chainID = "interop-034"
	for seed := uint64(1); seed <= 2; seed++ {
		dir := t.TempDir()
		key := newKey(byte(seed + 40))
		pv := tmprivval.NewFilePV(tmed25519.PrivKey(key.priv), filepath.Join(dir, "key.json"), filepath.Join(dir, "state.json"))
		g, err := guard.New(key, guard.Config{Dir: dir, AutoInit: true})
		if err != nil {
			t.Fatal(err)
		}
		pub := pv.Key.PubKey
		var signed, refused int
		for i, q := range scenario(seed+34, 300) {
			var theirErr error
			var theirSig, sb []byte
			var theirTS time.Time
			if q.phase == signbytes.Proposal {
				p := &tmproto.Proposal{Type: tmproto.ProposalType, Height: q.h, Round: int32(q.r), PolRound: int32(q.pol),
					BlockID: tmBlockID(q.block, 0, 1), Timestamp: q.ts}
				sb = tmtypes.ProposalSignBytes(chainID, p)
				theirErr = pv.SignProposal(chainID, p)
				theirSig, theirTS = p.Signature, p.Timestamp
			} else {
				v := &tmproto.Vote{Type: tmTypes[q.phase], Height: q.h, Round: int32(q.r), BlockID: tmBlockID(q.block, 0, 1), Timestamp: q.ts}
				sb = tmtypes.VoteSignBytes(chainID, v)
				theirErr = pv.SignVote(chainID, v)
				theirSig, theirTS = v.Signature, v.Timestamp
			}
			s, ourErr := g.SignBytes(ctx, sb)
			if (theirErr == nil) != (ourErr == nil) {
				t.Fatalf("seed %d request %d %+v: FilePV err %v, Guard err %v", seed, i, q, theirErr, ourErr)
			}
			if ourErr != nil {
				if !errors.Is(ourErr, signer.ErrDoubleSign) {
					t.Fatalf("request %d: Guard refused with %v", i, ourErr)
				}
				refused++
				continue
			}
			if !bytes.Equal(s.Signature, theirSig) || !s.Timestamp.Equal(theirTS) || !pub.VerifySignature(s.SignBytes, s.Signature) {
				t.Fatalf("request %d %+v: Guard gave %x at %v, FilePV %x at %v", i, q, s.Signature, s.Timestamp, theirSig, theirTS)
			}
			signed++
		}
		g.Close()
		t.Logf("seed %d: %d signed, %d refused, both alike", seed, signed, refused)
	}
}
