package signbytes_test

import (
	"bytes"
	"fmt"
	"log"
	"time"

	"github.com/signerkit/signerkit/signbytes"
)

// Parse tells what a validator is asking to sign, whichever node sent it.
func ExampleParse() {
	// Sign bytes as a gno or CometBFT node builds them for a prevote.
	vote := signbytes.Message{
		Format:    signbytes.AnyFormat,
		Phase:     signbytes.Prevote,
		Height:    42,
		Round:     0,
		BlockID:   signbytes.BlockID{Hash: bytes.Repeat([]byte{0xab}, 32), PartSetHeader: signbytes.PartSetHeader{Total: 1, Hash: bytes.Repeat([]byte{0xcd}, 32)}},
		Timestamp: time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC),
		ChainID:   "test11",
	}
	b, err := vote.Bytes()
	if err != nil {
		log.Fatal(err)
	}

	m, err := signbytes.Parse(b)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(m.Phase, m.Height, m.Round, m.Step(), m.ChainID, m.Format)

	// Rebuild the same vote with another timestamp.
	later, err := m.WithTimestamp(m.Timestamp.Add(time.Second))
	if err != nil {
		log.Fatal(err)
	}
	m2, _ := signbytes.Parse(later)
	fmt.Println(m2.Timestamp.Format(time.RFC3339), len(later) == len(b))
	// Output:
	// prevote 42 0 2 test11 tm2|cometbft
	// 2026-05-01T12:00:01Z true
}
