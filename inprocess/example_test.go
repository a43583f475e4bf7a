package inprocess_test

import (
	"context"
	"crypto/ed25519"
	"encoding/hex"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/signerkit/signerkit/inprocess"
	"github.com/signerkit/signerkit/signer"
)

func Example() {
	// The private key of RFC 8032's first Ed25519 test vector.
	seed, _ := hex.DecodeString("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60")
	key, err := inprocess.FromSeed(seed, signer.Ed25519)
	if err != nil {
		log.Fatal(err)
	}
	defer key.Close() // wipes the key

	sig, err := key.SignContext(context.Background(), nil) // the vector signs the empty message
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(hex.EncodeToString(sig[:16]) + "…")
	fmt.Println("valid:", ed25519.Verify(key.Public().(ed25519.PublicKey), nil, sig))
	// Output:
	// e5564300c360ac729086e2cc806e828a…
	// valid: true
}

// A key file opened by URI, as a service configured with one string would
// open it: importing the package registers the inprocess scheme.
func Example_uRI() {
	dir, err := os.MkdirTemp("", "inprocess-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	// Write RFC 8032's first test key as a PKCS #8 PEM file, mode 0600.
	seed, _ := hex.DecodeString("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60")
	path := filepath.Join(dir, "validator.pem")
	if err := inprocess.WriteKeyFile(path, ed25519.NewKeyFromSeed(seed)); err != nil {
		log.Fatal(err)
	}

	ctx := context.Background()
	key, err := signer.Open(ctx, "inprocess:file="+path)
	if err != nil {
		log.Fatal(err)
	}
	defer key.Close()
	sig, err := key.SignContext(ctx, nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%T signs %x…\n", key, sig[:16])
	fmt.Println("valid:", ed25519.Verify(key.Public().(ed25519.PublicKey), nil, sig))
	// Output:
	// *inprocess.Signer signs e5564300c360ac729086e2cc806e828a…
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

func ExampleStore() {
	ctx := context.Background()
	var store inprocess.Store // the zero Store is empty and ready
	defer store.Close()

	if _, err := store.GenerateKey(ctx, signer.Ed25519, "validator"); err != nil {
		log.Fatal(err)
	}
	if _, err := store.GenerateKey(ctx, signer.ECDSASecp256k1, "treasury"); err != nil {
		log.Fatal(err)
	}
	keys, _ := store.ListKeys(ctx)
	for _, k := range keys {
		fmt.Println(k.Label, k.Algorithm)
	}

	s, err := store.OpenKey(ctx, signer.KeyRef{Label: "validator"})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	msg := []byte("prevote")
	sig, _ := s.SignContext(ctx, msg)
	fmt.Println("valid:", ed25519.Verify(s.Public().(ed25519.PublicKey), msg, sig))
	// Output:
	// treasury secp256k1
	// validator ed25519
	// valid: true
}
