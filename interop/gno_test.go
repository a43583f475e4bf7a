package interop

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"

	cmtproto "github.com/cometbft/cometbft/proto/tendermint/types"
	cmttypes "github.com/cometbft/cometbft/types"
	gnoprivval "github.com/gnolang/gno/tm2/pkg/bft/privval"
	gnotypes "github.com/gnolang/gno/tm2/pkg/bft/types"
	gnocrypto "github.com/gnolang/gno/tm2/pkg/crypto"
	gnoed25519 "github.com/gnolang/gno/tm2/pkg/crypto/ed25519"

	"github.com/signerkit/signerkit/guard"
	"github.com/signerkit/signerkit/signbytes"
	"github.com/signerkit/signerkit/signer"
)

func gnoBlockID(tag, salt byte, total int) gnotypes.BlockID {
	if tag == 0 {
		return gnotypes.BlockID{}
	}
	return gnotypes.BlockID{Hash: hash(tag, salt), PartsHeader: gnotypes.PartSetHeader{Total: total, Hash: hash(tag^0xff, salt)}}
}

func ourGnoBlockID(id gnotypes.BlockID) signbytes.BlockID {
	return signbytes.BlockID{Hash: id.Hash, PartSetHeader: signbytes.PartSetHeader{Total: uint32(id.PartsHeader.Total), Hash: id.PartsHeader.Hash}}
}

var gnoTypes = map[signbytes.Phase]gnotypes.SignedMsgType{
	signbytes.Prevote: gnotypes.PrevoteType, signbytes.Precommit: gnotypes.PrecommitType, signbytes.Proposal: gnotypes.ProposalType,
}

// checkTM2Parity parses gno's bytes and rebuilds them.
func checkTM2Parity(t *testing.T, name string, theirs []byte, want signbytes.Message) {
	t.Helper()
	checkFormatParity(t, signbytes.TM2, "gno", name, theirs, want)
}

// gno v1.7.1's own Vote.SignBytes and Proposal.SignBytes against ParseTM2
// and Message.Bytes.
func TestGnoSignBytes(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 71))
	chains := []string{"test11", "portal-loop", "c", string(bytes.Repeat([]byte("y"), 50))}
	for i := 0; i < 3000; i++ {
		chainID := chains[rng.IntN(len(chains))]
		h := rng.Int64N(1 << 40)
		r := rng.IntN(1 << 20)
		if rng.IntN(3) == 0 {
			r = rng.IntN(3)
		}
		id := gnoBlockID(byte(rng.IntN(4)), byte(i), rng.IntN(5))
		if rng.IntN(20) == 0 && len(id.Hash) > 0 {
			id.PartsHeader = gnotypes.PartSetHeader{}
		}
		ts := randomTime(rng)

		phase := []signbytes.Phase{signbytes.Prevote, signbytes.Precommit}[rng.IntN(2)]
		vote := &gnotypes.Vote{Type: gnoTypes[phase], Height: h, Round: r, BlockID: id, Timestamp: ts, ValidatorIndex: 2}
		want := signbytes.Message{Phase: phase, Height: h, Round: int64(r), Timestamp: ts, ChainID: chainID}
		if !id.IsZero() {
			want.BlockID = ourGnoBlockID(id)
		}
		checkTM2Parity(t, "vote", vote.SignBytes(chainID), want)

		pol := rng.IntN(r+2) - 1
		prop := &gnotypes.Proposal{Type: gnotypes.ProposalType, Height: h, Round: r, POLRound: pol, BlockID: id, Timestamp: ts}
		want = signbytes.Message{Phase: signbytes.Proposal, Height: h, Round: int64(r), POLRound: int64(pol), Timestamp: ts, ChainID: chainID}
		if !id.IsZero() {
			want.BlockID = ourGnoBlockID(id)
		}
		checkTM2Parity(t, "proposal", prop.SignBytes(chainID), want)
	}
}

// gnoKey is a gno types.Signer over the same key as an edKey.
type gnoKey struct{ priv gnoed25519.PrivKeyEd25519 }

func (k gnoKey) PubKey() gnocrypto.PubKey      { return k.priv.PubKey() }
func (k gnoKey) Sign(b []byte) ([]byte, error) { return k.priv.Sign(b) }
func (k gnoKey) Close() error                  { return nil }
func gnoKeyOf(k *edKey) gnoKey                 { var p gnoed25519.PrivKeyEd25519; copy(p[:], k.priv); return gnoKey{p} }
func (q request) gnoVote(addr gnocrypto.Address) *gnotypes.Vote {
	return &gnotypes.Vote{Type: gnoTypes[q.phase], Height: q.h, Round: int(q.r), BlockID: gnoBlockID(q.block, 0, 1),
		Timestamp: q.ts, ValidatorAddress: addr}
}

// The Guard and gno v1.7.1's PrivValidator (tm2's FileState), given the same
// key and the same requests, sign and refuse alike, give the same
// signatures and hand back the same timestamps; gno's own Vote.Verify
// accepts every vote the Guard signs.
func TestGnoPrivValidatorAgrees(t *testing.T) {
	ctx := context.Background()
	const chainID = "test11"
	for seed := uint64(1); seed <= 4; seed++ {
		dir := t.TempDir()
		key := newKey(byte(seed))
		gk := gnoKeyOf(key)
		pv, err := gnoprivval.NewPrivValidator(gk, filepath.Join(dir, "state.json"))
		if err != nil {
			t.Fatal(err)
		}
		g, err := guard.New(key, guard.Config{Dir: dir, AutoInit: true, Formats: signbytes.TM2})
		if err != nil {
			t.Fatal(err)
		}
		pub := gk.PubKey()
		var signed, refused, restamped int
		for i, q := range scenario(seed+100, 300) {
			var theirErr error
			var theirSig, sb []byte
			var theirTS time.Time
			if q.phase == signbytes.Proposal {
				p := &gnotypes.Proposal{Type: gnotypes.ProposalType, Height: q.h, Round: int(q.r), POLRound: int(q.pol),
					BlockID: gnoBlockID(q.block, 0, 1), Timestamp: q.ts}
				sb = p.SignBytes(chainID)
				theirErr = pv.SignProposal(chainID, p)
				theirSig, theirTS = p.Signature, p.Timestamp
			} else {
				v := q.gnoVote(pub.Address())
				sb = v.SignBytes(chainID)
				theirErr = pv.SignVote(chainID, v)
				theirSig, theirTS = v.Signature, v.Timestamp
			}
			s, ourErr := g.SignBytes(ctx, sb)
			if (theirErr == nil) != (ourErr == nil) {
				t.Fatalf("seed %d request %d %+v: gno err %v, Guard err %v", seed, i, q, theirErr, ourErr)
			}
			if ourErr != nil {
				if !errors.Is(ourErr, signer.ErrDoubleSign) {
					t.Fatalf("request %d: Guard refused with %v", i, ourErr)
				}
				refused++
				continue
			}
			if !bytes.Equal(s.Signature, theirSig) || !s.Timestamp.Equal(theirTS) {
				t.Fatalf("request %d %+v: Guard gave %x at %v, gno %x at %v", i, q, s.Signature, s.Timestamp, theirSig, theirTS)
			}
			if q.phase != signbytes.Proposal {
				v := q.gnoVote(pub.Address())
				v.Timestamp, v.Signature = s.Timestamp, s.Signature
				if err := v.Verify(chainID, pub); err != nil {
					t.Fatalf("request %d: gno rejects the Guard's vote: %v", i, err)
				}
			} else if !pub.VerifyBytes(s.SignBytes, s.Signature) {
				t.Fatalf("request %d: gno's ed25519 rejects the Guard's proposal signature", i)
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

// The same vote built by gno and by CometBFT: the bytes are identical
// exactly when Parse reports both dialects, and differ only in the cases
// the signbytes package documents (a Unix-epoch timestamp, a block hash
// with an empty part-set header).
func TestGnoAndCometBFTAgree(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	same, differ := 0, 0
	for i := 0; i < 3000; i++ {
		h, r := rng.Int64N(1<<40)+1, rng.IntN(4)
		tag := byte(rng.IntN(3))
		total := rng.IntN(3)
		ts := randomTime(rng)
		gid, cid := gnoBlockID(tag, byte(i), total), cmtBlockID(tag, byte(i), uint32(total))
		if rng.IntN(10) == 0 && tag != 0 {
			gid.PartsHeader, cid.PartSetHeader = gnotypes.PartSetHeader{}, cmtBlockID(0, 0, 0).PartSetHeader
		}
		gb := (&gnotypes.Vote{Type: gnotypes.PrecommitType, Height: h, Round: r, BlockID: gid, Timestamp: ts}).SignBytes("test11")
		cb := cmttypes.VoteSignBytes("test11", &cmtproto.Vote{Type: cmtproto.PrecommitType, Height: h, Round: int32(r), BlockID: cid, Timestamp: ts})
		gm, err1 := signbytes.Parse(gb)
		cm, err2 := signbytes.Parse(cb)
		if err1 != nil || err2 != nil {
			t.Fatal(err1, err2)
		}
		both := gm.Format == signbytes.AnyFormat
		if bytes.Equal(gb, cb) != both || (cm.Format == signbytes.AnyFormat) != both {
			t.Fatalf("gno %x (%v), CometBFT %x (%v)", gb, gm.Format, cb, cm.Format)
		}
		if !both {
			gm.Format = signbytes.CometBFT
			if b, err := gm.Bytes(); err != nil || !bytes.Equal(b, cb) {
				t.Fatalf("gno's vote rebuilt for CometBFT: %x, %v; CometBFT %x", b, err, cb)
			}
			differ++
		} else {
			same++
		}
	}
	t.Logf("%d votes byte-identical in both, %d differ (epoch timestamps, empty part-set headers)", same, differ)
}
