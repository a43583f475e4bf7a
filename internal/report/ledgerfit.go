package report

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/signerkit/signerkit/signbytes"
)

// LedgerAppMax is the longest sign bytes the upstream Ledger validator
// app signs (ledger.AppMaxMessage): a one-byte length prefix and at most
// 127 bytes of canonical message.
const LedgerAppMax = 128

// FitTime is the timestamp of the fit table: 2026-05-01T12:00:00.999999999Z,
// whose seconds and nanoseconds each take five varint bytes, as every
// real timestamp of these years with nanoseconds ≥ 2^28 does.
var FitTime = time.Unix(1777636800, 999999999).UTC()

// FitBlockID is the block id of the fit table: a 32-byte hash and a
// part-set header of one part with a 32-byte hash, as a real block has.
func FitBlockID() signbytes.BlockID {
	return signbytes.BlockID{
		Hash:          bytes.Repeat([]byte{0x22}, 32),
		PartSetHeader: signbytes.PartSetHeader{Total: 1, Hash: bytes.Repeat([]byte{0x11}, 32)},
	}
}

// FitCase is one row of the fit table: a message kind at a round.
type FitCase struct {
	Name     string // e.g. "proposal (no POL round)"
	Phase    signbytes.Phase
	Round    int64
	POLRound int64
	Nil      bool // a vote for nil: no block id
}

// FitCases are the rows of the fit table. Height and round are fixed64
// in tm2 sign bytes, so every height ≥ 1 and every round ≥ 1 give the
// same length; round 0 is left out of the encoding and so is shorter.
var FitCases = []FitCase{
	{Name: "proposal, no POL round (−1)", Phase: signbytes.Proposal, Round: 0, POLRound: -1},
	{Name: "proposal, no POL round (−1)", Phase: signbytes.Proposal, Round: 1, POLRound: -1},
	{Name: "proposal, no POL round (−1)", Phase: signbytes.Proposal, Round: 100, POLRound: -1},
	{Name: "proposal, POL round 0", Phase: signbytes.Proposal, Round: 1, POLRound: 0},
	{Name: "proposal, POL round 1…127", Phase: signbytes.Proposal, Round: 10, POLRound: 9},
	{Name: "prevote for a block", Phase: signbytes.Prevote, Round: 0},
	{Name: "prevote for a block", Phase: signbytes.Prevote, Round: 1},
	{Name: "prevote for a block", Phase: signbytes.Prevote, Round: 100},
	{Name: "precommit for a block", Phase: signbytes.Precommit, Round: 0},
	{Name: "precommit for a block", Phase: signbytes.Precommit, Round: 1},
	{Name: "precommit for a block", Phase: signbytes.Precommit, Round: 100},
	{Name: "prevote or precommit for nil", Phase: signbytes.Precommit, Round: 1, Nil: true},
}

// FitChainIDLengths are the chain-ID lengths the table gives sizes at.
var FitChainIDLengths = []int{1, 6, 7, 8, 12, 16, 18, 19, 24, 32}

// SignBytes returns the tm2 sign bytes of c at height 1 on a chain ID of
// n characters, with FitTime and FitBlockID.
func (c FitCase) SignBytes(n int) []byte {
	m := signbytes.Message{
		Format: signbytes.TM2, Phase: c.Phase, Height: 1, Round: c.Round, POLRound: c.POLRound,
		Timestamp: FitTime, ChainID: strings.Repeat("x", n),
	}
	if !c.Nil {
		m.BlockID = FitBlockID()
	}
	b, err := m.Bytes()
	if err != nil {
		panic("report: fit case " + c.Name + ": " + err.Error())
	}
	return b
}

// MaxChainID returns the longest chain ID (in bytes, up to 200) whose
// sign bytes of c are at most limit bytes, or -1 when none is.
func (c FitCase) MaxChainID(limit int) int {
	best := -1
	for n := 0; n <= 200; n++ {
		if len(c.SignBytes(n)) <= limit {
			best = n
		}
	}
	return best
}

// WriteLedgerFit writes the section on which tm2 messages the Ledger
// validator app can sign.
func WriteLedgerFit(w io.Writer) error {
	bw := bufio.NewWriter(w)
	p := func(format string, a ...any) { fmt.Fprintf(bw, format, a...) }
	p("## What a Ledger user must know: sign bytes over %d bytes\n\n", LedgerAppMax)
	p("The Ledger validator app refuses sign bytes over %d bytes (`ledger.AppMaxMessage`), so a validator on a chain "+
		"with a long enough chain ID cannot sign some real tm2 messages with it. The table gives the length of real tm2 sign bytes "+
		"(package `signbytes`, length prefix included) at chain IDs of n bytes, and the longest chain ID each message fits with; "+
		"**bold** lengths are over the limit. ", LedgerAppMax)
	p("Sizes depend on the block ID and the timestamp, so these use the realistic worst case: a block ID with a 32-byte hash "+
		"and a part-set header of 1 part with a 32-byte hash, and the timestamp %s (seconds and nanoseconds five varint bytes each; "+
		"a timestamp with fewer nanoseconds, or a block of 128 parts or more, shifts a length by a byte or two). ", FitTime.Format(time.RFC3339Nano))
	p("Height and round are fixed 8-byte fields, so any height and any round ≥ 1 give the same length; round 0 is left out and saves 9 bytes. "+
		"Once the message passes 127 bytes its length prefix takes two bytes, which is why lengths jump from %d to %d.\n\n", LedgerAppMax, LedgerAppMax+2)
	p("| message | round |")
	for _, n := range FitChainIDLengths {
		p(" n=%d |", n)
	}
	p(" longest chain ID that fits |\n|---|--:|")
	for range FitChainIDLengths {
		p("--:|")
	}
	p("--:|\n")
	for _, c := range FitCases {
		p("| %s | %d |", c.Name, c.Round)
		for _, n := range FitChainIDLengths {
			l := len(c.SignBytes(n))
			if l > LedgerAppMax {
				p(" **%d** |", l)
			} else {
				p(" %d |", l)
			}
		}
		switch mx := c.MaxChainID(LedgerAppMax); mx {
		case -1:
			p(" none |\n")
		default:
			p(" %d |\n", mx)
		}
	}
	p("\nSo on the sample chain `test11` (6 bytes) everything fits, just; a proposal without a POL round at round ≥ 1 needs a chain ID of at most %d bytes, "+
		"and a vote for a block at round ≥ 1 one of at most %d. The `ledger` client refuses longer sign bytes before sending them.\n",
		FitCase{Phase: signbytes.Proposal, Round: 1, POLRound: -1}.MaxChainID(LedgerAppMax),
		FitCase{Phase: signbytes.Precommit, Round: 1}.MaxChainID(LedgerAppMax))
	return bw.Flush()
}
