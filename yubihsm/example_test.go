package yubihsm_test

import (
	"context"
	"crypto/ed25519"
	"fmt"
	"log"
	"net/http/httptest"

	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/yubihsm"
	"github.com/signerkit/signerkit/yubihsm/yubihsmsim"
)

func Example() {
	// A simulated YubiHSM 2 behind a connector; use the URL of a real
	// yubihsm-connector (http://127.0.0.1:12345 by default) instead.
	dev := yubihsmsim.New(yubihsmsim.Config{})
	connector := httptest.NewServer(dev.Handler())
	defer connector.Close()

	ctx := context.Background()
	c, err := yubihsm.Open(ctx, yubihsm.Config{URL: connector.URL, Password: []byte("password")})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	ki, err := c.GenerateKey(ctx, signer.Ed25519, "validator")
	if err != nil {
		log.Fatal(err)
	}
	k, err := c.Key(ctx, signer.KeyRef{Label: "validator"})
	if err != nil {
		log.Fatal(err)
	}
	defer k.Close()

	vote := []byte("prevote at height 42")
	sig, err := k.SignContext(ctx, vote)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("algorithm:", ki.Algorithm)
	fmt.Println("verified:", ed25519.Verify(k.Public().(ed25519.PublicKey), vote, sig))
	// Output:
	// algorithm: ed25519
	// verified: true
}
