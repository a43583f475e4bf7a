package inprocess_test

import (
	"context"
	"encoding/hex"
	"fmt"
	"log"

	"github.com/signerkit/signerkit/inprocess"
	"github.com/signerkit/signerkit/signer"
)

func Example() {
	// The private key of RFC 8032's first Ed25519 test vector.
	seed, _ := hex.DecodeString("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60")
	key, err := inprocess.FromSeed(signer.Ed25519, seed)
	if err != nil {
		log.Fatal(err)
	}
	defer key.Close() // wipes the key

	sig, err := key.SignContext(context.Background(), nil) // the vector signs the empty message
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(hex.EncodeToString(sig[:16]) + "…")
	fmt.Println("valid:", signer.Ed25519.Verify(key.Public(), nil, sig) == nil)
	// Output:
	// e5564300c360ac729086e2cc806e828a…
	// valid: true
}

func ExampleGenerate() {
	key, err := inprocess.Generate(signer.ECDSAP256)
	if err != nil {
		log.Fatal(err)
	}
	defer key.Close()

	msg := []byte("hello")
	sig, err := key.SignContext(context.Background(), msg)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(len(sig), "bytes, r‖s; valid:", signer.ECDSAP256.Verify(key.Public(), msg, sig) == nil)
	// Output: 64 bytes, r‖s; valid: true
}

func ExampleKeyring() {
	ctx := context.Background()
	var ring inprocess.Keyring
	defer ring.Close()

	if _, err := ring.GenerateKey(ctx, signer.Ed25519, "validator"); err != nil {
		log.Fatal(err)
	}
	if _, err := ring.GenerateKey(ctx, signer.ECDSASecp256k1, "treasury"); err != nil {
		log.Fatal(err)
	}
	keys, _ := ring.ListKeys(ctx)
	for _, k := range keys {
		fmt.Println(k.Label, k.Algorithm)
	}

	s, err := ring.OpenKey(ctx, signer.KeyRef{Label: "treasury"})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	msg := []byte(`{"send":"10ugnot"}`)
	sig, _ := s.SignContext(ctx, msg)
	fmt.Println("valid:", signer.ECDSASecp256k1.Verify(s.Public(), msg, sig) == nil)
	// Output:
	// treasury secp256k1
	// validator ed25519
	// valid: true
}
