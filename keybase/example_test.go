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

// A key exported by `gnokey export` (docs/protocols.md C.5), opened once and
// then signing at in-process speed.
func Example() {
	armor, err := os.ReadFile("testdata/kat-c5.armor")
	if err != nil {
		log.Fatal(err)
	}
	passphrase := []byte("password")
	defer clear(passphrase)

	ctx := context.Background()
	key, err := keybase.OpenArmor(ctx, armor, signer.SecretBytes(passphrase), keybase.UnlockOnce)
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
	fmt.Println("valid:", ed25519.Verify(key.Public().(ed25519.PublicKey), msg, sig))
	// Output:
	// public key: 03a107bff3ce10be1d70dd18e74bc09967e4d6309ba50d5f1ddc8664125531b8
	// valid: true
}

func ExampleOpenStore() {
	dir, err := os.MkdirTemp("", "keybase-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	ctx := context.Background()
	// The directory is created by the first key written. Cost 4 keeps the
	// example fast; leave Cost at 0 (12, gnokey's) for real keys.
	cfg := keybase.Config{
		Dir:    filepath.Join(dir, "keys"),
		Secret: signer.SecretBytes([]byte("correct horse battery staple")),
		Cost:   4,
	}
	store, err := keybase.OpenStore(ctx, cfg)
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
	if _, err := store.GenerateKey(ctx, signer.Ed25519, "validator"); err != nil {
		log.Fatal(err)
	}
	if _, err := store.GenerateKey(ctx, signer.ECDSASecp256k1, "treasury"); err != nil {
		log.Fatal(err)
	}
	keys, _ := store.ListKeys(ctx) // public keys, no passphrase needed
	for _, k := range keys {
		fmt.Println(k.Label, k.Algorithm)
	}

	key, err := store.OpenKey(ctx, signer.KeyRef{Label: "validator"})
	if err != nil {
		log.Fatal(err)
	}
	defer key.Close()
	msg := []byte("precommit")
	sig, _ := key.SignContext(ctx, msg)
	fmt.Println("valid:", ed25519.Verify(key.Public().(ed25519.PublicKey), msg, sig))

	cfg.Secret = signer.SecretBytes([]byte("guess"))
	cfg.Key.Label = "validator"
	_, err = keybase.Open(ctx, cfg)
	fmt.Println(err)
	// Output:
	// treasury secp256k1
	// validator ed25519
	// valid: true
	// keybase: key "validator": signer: wrong passphrase
}

// A key opened from one string, as a service configured with a URI opens
// it: importing the package registers the keybase scheme, and the
// passphrase comes from the environment.
func Example_uRI() {
	dir, err := os.MkdirTemp("", "keybase-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()
	os.Setenv("KEYBASE_EXAMPLE_PASS", "correct horse battery staple")
	defer os.Unsetenv("KEYBASE_EXAMPLE_PASS")
	store, err := keybase.OpenStore(ctx, keybase.Config{Dir: dir, Secret: signer.SecretEnv("KEYBASE_EXAMPLE_PASS"), Cost: 4})
	if err != nil {
		log.Fatal(err)
	}
	info, err := store.GenerateKey(ctx, signer.Ed25519, "validator")
	if err != nil {
		log.Fatal(err)
	}

	key, err := signer.Open(ctx, "keybase:dir="+dir+";label=validator?pin-source=env:KEYBASE_EXAMPLE_PASS&mode=unlock-once")
	if err != nil {
		log.Fatal(err)
	}
	defer key.Close()
	msg := []byte("precommit")
	sig, err := key.SignContext(ctx, msg)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%T, valid: %v\n", key, ed25519.Verify(info.Public.(ed25519.PublicKey), msg, sig))
	// Output: *keybase.Signer, valid: true
}
