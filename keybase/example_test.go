package keybase_test

import (
	"context"
	"crypto/ed25519"
	"encoding/hex"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/signerkit/signerkit/keybase"
	"github.com/signerkit/signerkit/signer"
)

// A key exported by `gnokey export` (protocols.md C.5), opened once and
// then signing at in-process speed.
func Example() {
	armor, err := os.ReadFile("testdata/kat-c5.armor")
	if err != nil {
		log.Fatal(err)
	}
	passphrase := []byte("password")
	defer clear(passphrase)

	ctx := context.Background()
	key, err := keybase.OpenArmor(ctx, armor, keybase.PassphraseBytes(passphrase), keybase.UnlockOnce)
	if err != nil {
		log.Fatal(err)
	}
	defer key.Close() // wipes the key

	msg := []byte("prevote at height 1")
	sig, err := key.SignContext(ctx, msg)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("public key:", hex.EncodeToString(key.Public().(ed25519.PublicKey)))
	fmt.Println("valid:", signer.Ed25519.Verify(key.Public(), msg, sig) == nil)
	// Output:
	// public key: 03a107bff3ce10be1d70dd18e74bc09967e4d6309ba50d5f1ddc8664125531b8
	// valid: true
}

func ExampleStore() {
	dir, err := os.MkdirTemp("", "keybase-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	ctx := context.Background()
	// Cost 4 keeps the example fast; leave Cost at 0 (12, gnokey's) for
	// real keys.
	store, err := keybase.OpenStore(filepath.Join(dir, "keys"), keybase.Config{Cost: 4})
	if err != nil {
		log.Fatal(err)
	}
	pass := keybase.PassphraseBytes([]byte("correct horse battery staple"))
	if _, err := store.Create(ctx, "validator", signer.Ed25519, pass); err != nil {
		log.Fatal(err)
	}
	if _, err := store.Create(ctx, "treasury", signer.ECDSASecp256k1, pass); err != nil {
		log.Fatal(err)
	}
	keys, _ := store.List(ctx) // public keys, no passphrase needed
	for _, k := range keys {
		fmt.Println(k.Label, k.Algorithm)
	}

	key, err := store.Open(ctx, "validator", pass, keybase.UnlockOnce)
	if err != nil {
		log.Fatal(err)
	}
	defer key.Close()
	msg := []byte("precommit")
	sig, _ := key.SignContext(ctx, msg)
	fmt.Println("valid:", signer.Ed25519.Verify(key.Public(), msg, sig) == nil)

	_, err = store.Open(ctx, "validator", keybase.PassphraseBytes([]byte("guess")), keybase.UnlockOnce)
	fmt.Println(err)
	// Output:
	// treasury secp256k1
	// validator ed25519
	// valid: true
	// keybase: key "validator": signer: wrong passphrase
}
