package interop

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"

	cmted25519 "github.com/cometbft/cometbft/crypto/ed25519"
	"github.com/cometbft/cometbft/privval"
	cmtproto "github.com/cometbft/cometbft/proto/tendermint/types"
	cmttypes "github.com/cometbft/cometbft/types"

	"github.com/signerkit/signerkit/guard"
	"github.com/signerkit/signerkit/signbytes"
	"github.com/signerkit/signerkit/signer"
)

func cmtBlockID(tag, salt byte, total uint32) cmtproto.BlockID {
	if tag == 0 {
		return cmtproto.BlockID{}
	}
	return cmtproto.BlockID{Hash: hash(tag, salt), PartSetHeader: cmtproto.PartSetHeader{Total: total, Hash: hash(tag^0xff, salt)}}
}

func ourBlockID(id cmtproto.BlockID) signbytes.BlockID {
	return signbytes.BlockID{Hash: id.Hash, PartSetHeader: signbytes.PartSetHeader{Total: id.PartSetHeader.Total, Hash: id.PartSetHeader.Hash}}
}

var cmtTypes = map[signbytes.Phase]cmtproto.SignedMsgType{
	signbytes.Prevote: cmtproto.PrevoteType, signbytes.Precommit: cmtproto.PrecommitType, signbytes.Proposal: cmtproto.ProposalType,
}

// checkParity parses CometBFT's bytes and rebuilds them.
func checkParity(t *testing.T, name string, theirs []byte, want signbytes.Message) {
	t.Helper()
	checkFormatParity(t, signbytes.CometBFT, "CometBFT", name, theirs, want)
}

func randomTime(rng *rand.Rand) time.Time {
	switch rng.IntN(8) {
	case 0:
		return time.Time{} // 0001-01-01, what an unset time.Time encodes as
	case 1:
		return time.Unix(0, 0).UTC() // the epoch: an empty Timestamp message
	case 2:
		return time.Unix(rng.Int64N(1<<33), 0).UTC()
	}
	return time.Unix(rng.Int64N(1<<33), rng.Int64N(1e9)).UTC()
}

// CometBFT v0.38.26's own VoteSignBytes, ProposalSignBytes and
// VoteExtensionSignBytes against ParseCometBFT and Message.Bytes.
func TestCometBFTSignBytes(t *testing.T) {
	rng := rand.New(rand.NewPCG(38, 26))
	chains := []string{"cosmoshub-4", "test-chain-ABC", "c", string(bytes.Repeat([]byte("x"), 50))}
	for i := 0; i < 3000; i++ {
		chainID := chains[rng.IntN(len(chains))]
		h := rng.Int64N(1 << 40)
		if rng.IntN(10) == 0 {
			h = int64(rng.Uint64())
		}
		r := rng.Int32N(1 << 20)
		if rng.IntN(3) == 0 {
			r = rng.Int32N(3)
		}
		id := cmtBlockID(byte(rng.IntN(4)), byte(i), uint32(rng.IntN(5)))
		if rng.IntN(20) == 0 && len(id.Hash) > 0 {
			id.PartSetHeader = cmtproto.PartSetHeader{} // a hash with an empty part-set header
		}
		ts := randomTime(rng)

		// Votes.
		phase := []signbytes.Phase{signbytes.Prevote, signbytes.Precommit}[rng.IntN(2)]
		vote := &cmtproto.Vote{Type: cmtTypes[phase], Height: h, Round: r, BlockID: id, Timestamp: ts,
			ValidatorAddress: bytes.Repeat([]byte{1}, 20), ValidatorIndex: 3, Extension: []byte("ext")}
		want := signbytes.Message{Phase: phase, Height: h, Round: int64(r), Timestamp: ts, ChainID: chainID}
		if !cmtBlockIDIsZero(id) {
			want.BlockID = ourBlockID(id)
		}
		checkParity(t, "vote", cmttypes.VoteSignBytes(chainID, vote), want)

		// Proposals.
		pol := rng.Int32N(r+2) - 1
		prop := &cmtproto.Proposal{Type: cmtproto.ProposalType, Height: h, Round: r, PolRound: pol, BlockID: id, Timestamp: ts}
		want = signbytes.Message{Phase: signbytes.Proposal, Height: h, Round: int64(r), POLRound: int64(pol), Timestamp: ts, ChainID: chainID}
		if !cmtBlockIDIsZero(id) {
			want.BlockID = ourBlockID(id)
		}
		checkParity(t, "proposal", cmttypes.ProposalSignBytes(chainID, prop), want)

		// Vote extensions.
		ext := make([]byte, rng.IntN(3)*rng.IntN(200))
		for j := range ext {
			ext[j] = byte(rng.Uint32())
		}
		vote.Extension = ext
		want = signbytes.Message{Phase: signbytes.VoteExtension, Height: h, Round: int64(r), ChainID: chainID}
		if len(ext) > 0 {
			want.Extension = ext
		}
		checkParity(t, "vote extension", cmttypes.VoteExtensionSignBytes(chainID, vote), want)
	}
}

func cmtBlockIDIsZero(id cmtproto.BlockID) bool {
	return len(id.Hash) == 0 && id.PartSetHeader.Total == 0 && len(id.PartSetHeader.Hash) == 0
}

func (q request) cmtVote(chainID string) *cmtproto.Vote {
	return &cmtproto.Vote{Type: cmtTypes[q.phase], Height: q.h, Round: int32(q.r), BlockID: cmtBlockID(q.block, 0, 1),
		Timestamp: q.ts, ValidatorAddress: bytes.Repeat([]byte{1}, 20)}
}

func (q request) cmtProposal() *cmtproto.Proposal {
	return &cmtproto.Proposal{Type: cmtproto.ProposalType, Height: q.h, Round: int32(q.r), PolRound: int32(q.pol),
		BlockID: cmtBlockID(q.block, 0, 1), Timestamp: q.ts}
}

// The Guard and CometBFT v0.38.26's FilePV, given the same key and the
// same requests, sign and refuse alike, give the same signatures and hand
// back the same timestamps; CometBFT's own Vote.Verify accepts every vote
// the Guard signs.
func TestCometBFTFilePVAgrees(t *testing.T) {
	ctx := context.Background()
	const chainID = "interop-chain"
	for seed := uint64(1); seed <= 4; seed++ {
		dir := t.TempDir()
		key := newKey(byte(seed))
		pv := privval.NewFilePV(cmted25519.PrivKey(key.priv), filepath.Join(dir, "key.json"), filepath.Join(dir, "state.json"))
		g, err := guard.New(key, guard.Config{Dir: dir, AutoInit: true, Formats: signbytes.CometBFT})
		if err != nil {
			t.Fatal(err)
		}
		pub := pv.Key.PubKey
		var signed, refused, restamped int
		for i, q := range scenario(seed, 300) {
			var theirErr error
			var theirSig []byte
			var theirTS time.Time
			var sb []byte
			if q.phase == signbytes.Proposal {
				p := q.cmtProposal()
				sb = cmttypes.ProposalSignBytes(chainID, p)
				theirErr = pv.SignProposal(chainID, p)
				theirSig, theirTS = p.Signature, p.Timestamp
			} else {
				v := q.cmtVote(chainID)
				sb = cmttypes.VoteSignBytes(chainID, v)
				theirErr = pv.SignVote(chainID, v)
				theirSig, theirTS = v.Signature, v.Timestamp
				if theirErr == nil {
					// CometBFT's own verification of the vote the Guard
					// will sign.
					vt, err := cmttypes.VoteFromProto(v)
					if err != nil {
						t.Fatal(err)
					}
					vt.ValidatorAddress = pub.Address()
					if err := vt.Verify(chainID, pub); err != nil {
						t.Fatalf("FilePV's own vote does not verify: %v", err)
					}
				}
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
			if !bytes.Equal(s.Signature, theirSig) || !s.Timestamp.Equal(theirTS) {
				t.Fatalf("request %d %+v: Guard gave %x at %v, FilePV %x at %v", i, q, s.Signature, s.Timestamp, theirSig, theirTS)
			}
			if !pub.VerifySignature(s.SignBytes, s.Signature) {
				t.Fatalf("request %d: CometBFT's ed25519 rejects the Guard's signature", i)
			}
			if s.TimestampChanged {
				restamped++
			}
			signed++
		}
		g.Close()
		t.Logf("seed %d: %d signed (%d with the earlier timestamp), %d refused, both alike", seed, signed, restamped, refused)
		if restamped == 0 || refused == 0 {
			t.Fatal("the scenario did not exercise every rule")
		}
	}
}

// A precommit for a block and its extension, signed through the Guard,
// pass CometBFT's own checks.
func TestCometBFTVoteExtension(t *testing.T) {
	ctx := context.Background()
	const chainID = "interop-chain"
	key := newKey(9)
	g, err := guard.New(key, guard.Config{Dir: t.TempDir(), AutoInit: true})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	pub := cmted25519.PrivKey(key.priv).PubKey()
	v := &cmtproto.Vote{Type: cmtproto.PrecommitType, Height: 7, Round: 1, BlockID: cmtBlockID(5, 0, 1),
		Timestamp: time.Now().UTC(), ValidatorAddress: pub.Address(), Extension: []byte("oracle prices")}
	sig, err := g.SignContext(ctx, cmttypes.VoteSignBytes(chainID, v))
	if err != nil {
		t.Fatal(err)
	}
	extSig, err := g.SignContext(ctx, cmttypes.VoteExtensionSignBytes(chainID, v))
	if err != nil {
		t.Fatal(err)
	}
	v.Signature, v.ExtensionSignature = sig, extSig
	vt, err := cmttypes.VoteFromProto(v)
	if err != nil {
		t.Fatal(err)
	}
	if err := vt.VerifyVoteAndExtension(chainID, pub); err != nil {
		t.Fatalf("CometBFT rejects the vote or its extension: %v", err)
	}
}
