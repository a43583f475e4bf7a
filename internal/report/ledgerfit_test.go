package report

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/signerkit/signerkit/ledger"
	"github.com/signerkit/signerkit/signbytes"
	"github.com/signerkit/signerkit/signbytes/signbytestest"
)

// tm2Bytes builds the sign bytes of c from a signbytes.Message filled in
// here, apart from FitCase.SignBytes.
func tm2Bytes(c FitCase, n int) []byte {
	m := signbytes.Message{Height: 1, Round: c.Round, Timestamp: FitTime, ChainID: strings.Repeat("x", n)}
	if !c.Nil {
		m.BlockID = signbytestest.SampleBlockID()
	}
	switch c.Phase.String() {
	case "proposal":
		m.Phase, m.POLRound = signbytes.Proposal, c.POLRound
	case "prevote":
		m.Phase = signbytes.Prevote
	case "precommit":
		m.Phase = signbytes.Precommit
	default:
		panic(c.Phase.String())
	}
	return signbytestest.Bytes(m)
}

func TestLedgerFitAgainstTM2(t *testing.T) {
	if LedgerAppMax != ledger.AppMaxMessage {
		t.Fatalf("LedgerAppMax %d, ledger.AppMaxMessage %d", LedgerAppMax, ledger.AppMaxMessage)
	}
	if !FitTime.Equal(signbytestest.SampleTime) {
		t.Fatalf("FitTime %v is not signbytestest.SampleTime %v", FitTime, signbytestest.SampleTime)
	}
	for _, c := range FitCases {
		want := -1
		for n := 0; n <= 200; n++ {
			sb, direct := c.SignBytes(n), tm2Bytes(c, n)
			if !bytes.Equal(sb, direct) {
				t.Fatalf("%s round %d chain %d: signbytes %x, tm2 %x", c.Name, c.Round, n, sb, direct)
			}
			if len(direct) <= ledger.AppMaxMessage {
				want = n
			}
		}
		if got := c.MaxChainID(LedgerAppMax); got != want {
			t.Errorf("%s round %d: MaxChainID %d, direct %d", c.Name, c.Round, got, want)
		}
	}
	// The reference sizes of docs/protocols.md A.5 on "test11".
	for _, tc := range []struct {
		k signbytestest.Kind
		c FitCase
	}{{signbytestest.KindPrevote, FitCases[5]}, {signbytestest.KindPrecommit, FitCases[9]}, {signbytestest.KindProposal, FitCases[1]}} {
		if got, want := len(tc.c.SignBytes(len(signbytestest.SampleChainID))), len(signbytestest.Message(tc.k, 1, signbytestest.SampleChainID)); got != want {
			t.Errorf("%s: %d bytes, signbytestest.Message %d", tc.k, got, want)
		}
	}
}

// TestLedgerFitTable checks every number of the markdown table against
// sign bytes built by tm2Bytes.
func TestLedgerFitTable(t *testing.T) {
	var b bytes.Buffer
	if err := fixtureReport(t).WriteMarkdown(&b); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	if !strings.Contains(md, "## What a Ledger user must know") {
		t.Fatal("report has no Ledger section")
	}
	for _, c := range FitCases {
		row := fmt.Sprintf("| %s | %d |", c.Name, c.Round)
		for _, n := range FitChainIDLengths {
			l := len(tm2Bytes(c, n))
			if l > ledger.AppMaxMessage {
				row += fmt.Sprintf(" **%d** |", l)
			} else {
				row += fmt.Sprintf(" %d |", l)
			}
		}
		mx := -1
		for n := 0; n <= 200; n++ {
			if len(tm2Bytes(c, n)) <= ledger.AppMaxMessage {
				mx = n
			}
		}
		row += fmt.Sprintf(" %d |\n", mx)
		if !strings.Contains(md, row) {
			t.Errorf("report lacks row %q", row)
		}
	}
	// What the issue reported, with this block id and timestamp: a
	// round-1 proposal fits a 6-byte chain ID, not 7; a round-1
	// precommit fits 17, not 18.
	for _, tc := range []struct {
		c      FitCase
		n, len int
	}{
		{FitCase{Phase: FitCases[1].Phase, Round: 1, POLRound: -1}, 6, 128},
		{FitCase{Phase: FitCases[1].Phase, Round: 1, POLRound: -1}, 7, 130},
		{FitCase{Phase: FitCases[9].Phase, Round: 1}, 17, 128},
		{FitCase{Phase: FitCases[9].Phase, Round: 1}, 18, 130},
	} {
		if got := len(tm2Bytes(tc.c, tc.n)); got != tc.len {
			t.Errorf("%s round 1 chain %d: %d bytes, want %d", tc.c.Phase, tc.n, got, tc.len)
		}
	}
	if t.Failed() {
		t.Log(md)
	}
}
