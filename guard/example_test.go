package guard_test

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/signerkit/signerkit/guard"
	"github.com/signerkit/signerkit/inprocess"
	"github.com/signerkit/signerkit/signbytes"
	"github.com/signerkit/signerkit/signer"
)

func Example() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "guard-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	// Any signer.Signer: here a key in process memory.
	key, err := inprocess.Generate(signer.Ed25519)
	if err != nil {
		log.Fatal(err)
	}
	defer key.Close()
	g, err := guard.New(key, guard.Config{Dir: dir})
	if err != nil {
		log.Fatal(err)
	}
	defer g.Close()
	// A validator moved from another signer that may have signed up to
	// height 99.
	if err := g.Init(ctx, "test11", 100); err != nil {
		log.Fatal(err)
	}

	vote := signbytes.Message{
		Format: signbytes.AnyFormat, Phase: signbytes.Prevote, Height: 100,
		BlockID:   signbytes.BlockID{Hash: make([]byte, 32), PartSetHeader: signbytes.PartSetHeader{Total: 1, Hash: make([]byte, 32)}},
		Timestamp: time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC), ChainID: "test11",
	}
	first, _ := vote.Bytes()
	s, err := g.SignBytes(ctx, first)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("signed, verifies:", ed25519.Verify(key.Public().(ed25519.PublicKey), first, s.Signature))

	// The node restarts and builds the same vote with a new timestamp.
	again, _ := vote.WithTimestamp(vote.Timestamp.Add(2 * time.Second))
	s2, err := g.SignBytes(ctx, again)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("same signature:", string(s2.Signature) == string(s.Signature), "use timestamp:", s2.Timestamp.Format(time.TimeOnly))

	// A prevote for another block at the same height and round is refused.
	vote.BlockID.Hash[0] = 1
	other, _ := vote.Bytes()
	_, err = g.SignBytes(ctx, other)
	fmt.Println(err)
	// Output:
	// signed, verifies: true
	// same signature: true use timestamp: 12:00:00
	// guard: chain "test11": conflicting data at the same height/round/step: asked to sign 100/0/2, last signed 100/0/2: signer: refused as a double sign
}

// A CometBFT v0.38 precommit for a block and its vote extension, signed
// together: the extension's signature comes back only with its
// recorded precommit's.
func ExampleGuard_SignWithExtension() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "guard-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	key, err := inprocess.Generate(signer.Ed25519)
	if err != nil {
		log.Fatal(err)
	}
	defer key.Close()
	g, err := guard.New(key, guard.Config{Dir: dir, AutoInit: true})
	if err != nil {
		log.Fatal(err)
	}
	defer g.Close()

	pre := signbytes.Message{
		Format: signbytes.CometBFT, Phase: signbytes.Precommit, Height: 7,
		BlockID:   signbytes.BlockID{Hash: make([]byte, 32), PartSetHeader: signbytes.PartSetHeader{Total: 1, Hash: make([]byte, 32)}},
		Timestamp: time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC), ChainID: "test11",
	}
	ext := signbytes.Message{Format: signbytes.CometBFT, Phase: signbytes.VoteExtension, Height: 7,
		ChainID: "test11", Extension: []byte("app data")}
	v, e, err := g.SignWithExtension(ctx, pre, ext)
	if err != nil {
		log.Fatal(err)
	}
	pub := key.Public().(ed25519.PublicKey)
	fmt.Println("precommit verifies:", ed25519.Verify(pub, v.SignBytes, v.Signature))
	fmt.Println("extension verifies:", ed25519.Verify(pub, e.SignBytes, e.Signature))

	// A conflicting precommit at the same height and round: refused, and
	// its extension is not signed.
	other := pre
	other.BlockID.Hash = make([]byte, 32)
	other.BlockID.Hash[0] = 1
	_, e2, err := g.SignWithExtension(ctx, other, ext)
	fmt.Println("refused:", errors.Is(err, signer.ErrDoubleSign), "extension released:", e2.Signature != nil)
	// Output:
	// precommit verifies: true
	// extension verifies: true
	// refused: true extension released: false
}
