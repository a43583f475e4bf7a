package privvaltest_test

import (
	"context"
	"crypto/ed25519"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/signerkit/signerkit/guard"
	"github.com/signerkit/signerkit/inprocess"
	"github.com/signerkit/signerkit/privval"
	"github.com/signerkit/signerkit/privval/privvaltest"
	"github.com/signerkit/signerkit/signbytes"
	"github.com/signerkit/signerkit/signer"
)

// A test plays the validator: it listens, lets a privval.Endpoint dial in,
// asks for a prevote and checks the signature with crypto/ed25519 over the
// sign bytes a CometBFT v0.38 node builds.
func Example() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	// The signer: an in-process key behind a guard, its state in a
	// temporary directory.
	key, err := inprocess.Generate(signer.Ed25519)
	if err != nil {
		log.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "privvaltest-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	g, err := guard.New(key, guard.Config{Dir: dir, AutoInit: true})
	if err != nil {
		log.Fatal(err)
	}
	defer g.Close()

	// The validator's listener, and the Endpoint that dials it.
	ln, err := privvaltest.NewListener("unix", privval.V038)
	if err != nil {
		log.Fatal(err)
	}
	defer ln.Close()
	e, err := privval.NewEndpoint(g, privval.Config{Dialect: privval.V038, Network: ln.Network(), Address: ln.Address()})
	if err != nil {
		log.Fatal(err)
	}
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- e.Run(runCtx) }()
	defer func() { stop(); <-done }()

	c, err := ln.Accept(ctx)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	pub, err := c.PubKey(ctx, "test-chain")
	if err != nil {
		log.Fatal(err)
	}
	id := signbytes.BlockID{Hash: make([]byte, 32), PartSetHeader: signbytes.PartSetHeader{Total: 1, Hash: make([]byte, 32)}}
	ts := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	v, err := c.SignVote(ctx, "test-chain", &privvaltest.Vote{Phase: signbytes.Prevote, Height: 1, BlockID: id, Timestamp: ts})
	if err != nil {
		log.Fatal(err)
	}
	sb, err := signbytes.Message{Format: signbytes.CometBFT, Phase: signbytes.Prevote, Height: 1, BlockID: id, Timestamp: ts, ChainID: "test-chain"}.Bytes()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("prevote signature verifies:", ed25519.Verify(pub, sb, v.Signature))

	// The same height, round and step for another block is a double sign.
	_, err = c.SignVote(ctx, "test-chain", &privvaltest.Vote{Phase: signbytes.Prevote, Height: 1, Timestamp: ts})
	fmt.Println("conflicting prevote refused:", err != nil)
	// Output:
	// prevote signature verifies: true
	// conflicting prevote refused: true
}
