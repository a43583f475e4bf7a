package signbytestest

import (
	"bytes"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/signerkit/signerkit/signbytes"
)

// The example of docs/protocols.md A.5: prevote H=123456 R=0 on test11.
func TestPrevoteKnownAnswer(t *testing.T) {
	want := "6b" + "0801" + "1140e2010000000000" + "2248" + "0a20" + strings.Repeat("22", 32) +
		"1224" + "0801" + "1220" + strings.Repeat("11", 32) +
		"2a0c" + "08c0abd2cf06" + "10ff93ebdc03" + "3206" + hex.EncodeToString([]byte("test11"))
	if got := hex.EncodeToString(Message(KindPrevote, 123456, "test11")); got != want {
		t.Errorf("prevote:\n got %s\nwant %s", got, want)
	}
}

// Sizes from docs/protocols.md A.5 (checked there against gno master).
func TestSizes(t *testing.T) {
	for _, tc := range []struct {
		chain                       string
		prevote, precommit, propose int
	}{
		{"dev", 105, 114, 125},
		{"test11", 108, 117, 128},
		{"staging.gno.land", 118, 127, 139},
		{"test-chain-with-long-id", 125, 135, 146},
	} {
		pv, pc, pp := Message(KindPrevote, 9, tc.chain), Message(KindPrecommit, 9, tc.chain), Message(KindProposal, 9, tc.chain)
		if len(pv) != tc.prevote || len(pc) != tc.precommit || len(pp) != tc.propose {
			t.Errorf("%s: sizes %d/%d/%d, want %d/%d/%d", tc.chain, len(pv), len(pc), len(pp), tc.prevote, tc.precommit, tc.propose)
		}
	}
	for k, want := range map[Kind]int{KindPrevote: 108, KindPrecommit: 117, KindProposal: 128, KindNilVote: 34} {
		if got := len(Message(k, 1<<40, SampleChainID)); got != want {
			t.Errorf("%v: %d bytes, want %d", k, got, want)
		}
		if got, ok := KindOfSize(want); !ok || got != k {
			t.Errorf("KindOfSize(%d) = %v, %v", want, got, ok)
		}
	}
	if _, ok := KindOfSize(100); ok {
		t.Error("KindOfSize(100) found a kind")
	}
}

// Every message parses back, in the TM2 dialect, to what it was built
// from: a consensus round (NextStep) and the padded nil prevotes of
// OfSize too.
func TestParsesBack(t *testing.T) {
	s := NewHeights("", 10)
	a, b := s.Next(KindPrevote), s.Next(KindPrevote)
	if bytes.Equal(a, b) {
		t.Fatal("two messages are identical")
	}
	ma, err := signbytes.ParseTM2(a)
	if err != nil || ma.Height != 10 || ma.Phase != signbytes.Prevote {
		t.Fatalf("first message: %v, %v", ma, err)
	}
	steps := s.NextStep()
	for i, want := range []signbytes.Phase{signbytes.Proposal, signbytes.Prevote, signbytes.Precommit} {
		m, err := signbytes.ParseTM2(steps[i].Bytes)
		if err != nil || m.Phase != want || m.Height != 12 || m.Round != 0 || steps[i].Height != 12 {
			t.Errorf("NextStep %d: %v, %v", i, m, err)
		}
	}
	for size := 0; size < 200; size++ {
		b := s.OfSize(size)
		if want := min(max(size, 34), 128); len(b) != want {
			t.Errorf("OfSize(%d): %d bytes, want %d", size, len(b), want)
		}
		if _, err := signbytes.ParseTM2(b); err != nil {
			t.Errorf("OfSize(%d): %v", size, err)
		}
	}
}
