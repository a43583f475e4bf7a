package signertrace_test

import (
	"context"
	"fmt"
	"log"

	"github.com/signerkit/signerkit/inprocess"
	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/signer/signertrace"
)

// Instrument keeps latency statistics per consensus step, the figures a
// validator operator would otherwise rebuild from log timestamps.
func ExampleInstrument() {
	key, err := inprocess.Generate(signer.Ed25519)
	if err != nil {
		log.Fatal(err)
	}
	s := signertrace.Instrument(key)
	defer s.Close()

	for height := 1; height <= 3; height++ {
		for _, step := range []string{"prevote", "precommit"} {
			ctx := signertrace.WithLabel(context.Background(), step)
			if _, err := s.SignContext(ctx, fmt.Appendf(nil, "%s at height %d", step, height)); err != nil {
				log.Fatal(err)
			}
		}
	}
	for _, l := range s.Snapshot().Labels {
		fmt.Printf("%s: %d signs, %d errors\n", l.Label, l.Count, l.Errors)
	}
	// s.Snapshot().WriteMarkdown(os.Stdout) prints the whole table, with
	// min, p50, p90, p99, max, mean and total latency.

	// Output:
	// precommit: 3 signs, 0 errors
	// prevote: 3 signs, 0 errors
}

// A Collector attached to the context of a sign shows where its time went.
func ExampleCollector() {
	key, err := inprocess.Generate(signer.ECDSASecp256k1)
	if err != nil {
		log.Fatal(err)
	}
	defer key.Close()

	col := signertrace.NewCollector()
	msg := []byte("transfer 10 ugnot")
	sig, err := key.SignContext(col.WithContext(context.Background()), msg)
	if err != nil {
		log.Fatal(err)
	}
	sum := col.Summary()
	fmt.Println("dominant stage:", sum.Dominant())
	fmt.Println("modeled time:", sum.Modeled())
	fmt.Println("signature bytes:", len(sig))
	fmt.Println("verifies:", signer.ECDSASecp256k1.Verify(key.Public(), msg, sig) == nil)
	// Output:
	// dominant stage: sign
	// modeled time: 0s
	// signature bytes: 64
	// verifies: true
}
