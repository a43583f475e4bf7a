package privval

import (
	"bytes"
	"errors"
	"reflect"
	"testing"
)

func seedRequests() [][]byte {
	pc := testVote(typePrecommit, 5, 1, 1)
	pc.Extension = []byte("ext")
	return [][]byte{
		encPingRequest(),
		encPubKeyRequest(chainID),
		encPubKeyRequest(""),
		encSignVoteRequest(testVote(typePrevote, 1, 0, 1), chainID, V038),
		encSignVoteRequest(testVote(typePrevote, 1, 0, 0), chainID, V034),
		encSignVoteRequest(pc, chainID, V038),
		encSignVoteRequest(&vote{}, "", V038),
		encSignProposalRequest(testProposal(3, 2, 1), chainID),
		encSignProposalRequest(&proposal{POLRound: -1}, chainID),
		{msgSignVoteRequest<<3 | 2, 0},
		{9<<3 | 2, 0},
		{0xff, 0xff},
	}
}

// FuzzDecodeRequest: the privval decoder never panics, fails only with a
// *ProtocolError, and what it decodes encodes and decodes back the same.
func FuzzDecodeRequest(f *testing.F) {
	for _, s := range seedRequests() {
		for _, d := range []Dialect{V038, V034} {
			f.Add(s, uint8(d))
		}
	}
	f.Fuzz(func(t *testing.T, b []byte, d uint8) {
		dialect := Dialect(d%3 + 1)
		req, err := decodeRequest(b, dialect)
		if err != nil {
			var pe *ProtocolError
			if !errors.As(err, &pe) {
				t.Fatalf("error %v is %T, not *ProtocolError", err, err)
			}
			return
		}
		var again []byte
		switch req.kind {
		case msgPingRequest:
			again = encPingRequest()
		case msgPubKeyRequest:
			again = encPubKeyRequest(req.chainID)
		case msgSignVoteRequest:
			if req.vote == nil {
				return
			}
			again = encSignVoteRequest(req.vote, req.chainID, dialect)
		case msgSignProposalRequest:
			if req.proposal == nil {
				return
			}
			again = encSignProposalRequest(req.proposal, req.chainID)
		default:
			t.Fatalf("decoded kind %d", req.kind)
		}
		req2, err := decodeRequest(again, dialect)
		if err != nil {
			t.Fatalf("re-encoded %x: %v", again, err)
		}
		if !reflect.DeepEqual(normalize(req), normalize(req2)) {
			t.Fatalf("round trip\n %+v\n %+v", req, req2)
		}
	})
}

// normalize makes empty and nil byte slices alike for comparison.
func normalize(r request) request {
	nb := func(b []byte) []byte {
		if len(b) == 0 {
			return nil
		}
		return b
	}
	if r.vote != nil {
		v := *r.vote
		v.BlockID.Hash, v.BlockID.PartSetHeader.Hash = nb(v.BlockID.Hash), nb(v.BlockID.PartSetHeader.Hash)
		v.ValidatorAddress, v.Signature, v.Extension, v.ExtensionSignature = nb(v.ValidatorAddress), nb(v.Signature), nb(v.Extension), nb(v.ExtensionSignature)
		v.Timestamp = v.Timestamp.UTC().Round(0)
		r.vote = &v
	}
	if r.proposal != nil {
		p := *r.proposal
		p.BlockID.Hash, p.BlockID.PartSetHeader.Hash = nb(p.BlockID.Hash), nb(p.BlockID.PartSetHeader.Hash)
		p.Signature = nb(p.Signature)
		p.Timestamp = p.Timestamp.UTC().Round(0)
		r.proposal = &p
	}
	return r
}

// FuzzDecodeNativeRequest: the amino decoder never panics, fails only
// with a *ProtocolError, and a SignRequest it decodes round-trips.
func FuzzDecodeNativeRequest(f *testing.F) {
	f.Add(goldenPubKeyRequest[1:])
	f.Add(goldenSignRequest[1:])
	f.Add(goldenSignResponse[1:])
	f.Add(encNativeSignRequest(nil))
	f.Add(encNativeSignRequest(bytes.Repeat([]byte{7}, 200)))
	f.Add([]byte{0x0a, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		req, err := decodeNativeRequest(b)
		if err != nil {
			var pe *ProtocolError
			if !errors.As(err, &pe) {
				t.Fatalf("error %v is %T, not *ProtocolError", err, err)
			}
			return
		}
		var again []byte
		if req.pubKey {
			again = encNativePubKeyRequest()
		} else {
			again = encNativeSignRequest(req.signBytes)
		}
		req2, err := decodeNativeRequest(again)
		if err != nil || req2.pubKey != req.pubKey || !bytes.Equal(req2.signBytes, req.signBytes) {
			t.Fatalf("round trip %+v → %x → %+v, %v", req, again, req2, err)
		}
	})
}

// FuzzReadFrame: framing never panics, never reads a frame above its cap
// and fails on a bad prefix with a *ProtocolError.
func FuzzReadFrame(f *testing.F) {
	f.Add([]byte{0})
	f.Add(appendFrame(nil, encPingRequest()))
	f.Add(goldenSignRequest)
	f.Add(bytes.Repeat([]byte{0xff}, 12))
	f.Add([]byte{0x81, 0x50})
	f.Fuzz(func(t *testing.T, b []byte) {
		const max = 100
		r := bytes.NewReader(b)
		for {
			frame, err := readFrame(r, max, nil)
			if err != nil {
				var pe *ProtocolError
				if errors.As(err, &pe) && pe.TooLarge != (len(pe.Reason) > 0 && bytes.Contains([]byte(pe.Reason), []byte("more than"))) {
					t.Fatalf("%v", err)
				}
				return
			}
			if len(frame) > max {
				t.Fatalf("frame of %d bytes", len(frame))
			}
		}
	})
}
