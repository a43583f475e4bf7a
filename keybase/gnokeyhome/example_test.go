package gnokeyhome_test

import (
	"context"
	"crypto/ed25519"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/signerkit/signerkit/keybase/gnokeyhome"
	"github.com/signerkit/signerkit/signer"
)

// copyHome copies the fixture gnokey home (written by gno's own keybase)
// to a temporary directory: a read-only open still creates the LOCK file
// it locks.
func copyHome() string {
	home, err := os.MkdirTemp("", "gnokeyhome-example")
	if err != nil {
		log.Fatal(err)
	}
	src := filepath.Join("testdata", "gnokey-home", "data", "keys.db")
	dst := filepath.Join(home, "data", "keys.db")
	if err := os.MkdirAll(dst, 0o700); err != nil {
		log.Fatal(err)
	}
	entries, err := os.ReadDir(src)
	if err != nil {
		log.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			log.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), b, 0o600); err != nil {
			log.Fatal(err)
		}
	}
	return home
}

// Every key of a gnokey home, as `gnokey list` shows them, and a sign with
// one of them, selected by its gnokey name.
func Example() {
	home := copyHome() // in real use: "" for gnokey's default home
	defer os.RemoveAll(home)
	ctx := context.Background()

	store, err := gnokeyhome.OpenStore(ctx, gnokeyhome.Config{
		Home:   home,
		Secret: signer.SecretBytes([]byte("fixture passphrase")),
	})
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
	keys, err := store.Keys(ctx)
	if err != nil {
		log.Fatal(err)
	}
	for _, k := range keys {
		fmt.Printf("%-20q %-7v %s", k.Name, k.Kind, k.Address)
		if k.Kind == gnokeyhome.Ledger {
			fmt.Print(" ", k.Path)
		}
		fmt.Println()
	}

	key, err := store.OpenKey(ctx, signer.KeyRef{Label: "my key/ed25519 ✓"})
	if err != nil {
		log.Fatal(err)
	}
	defer key.Close() // wipes the key
	msg := []byte("sign bytes")
	sig, err := key.SignContext(ctx, msg)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("valid:", ed25519.Verify(key.Public().(ed25519.PublicKey), msg, sig))
	// Output:
	// "g1jg8mtutu9khhfwc4nxmuhcpftf0pajdhfvsqf5" local   g1gma4ha9xs48t4c280ss5eq8lxzxx60jsqu7gzn
	// "ledger"             ledger  g18rlft0nwd3p42hp5rf76fxwynx6cqqkyr9u9fr 44'/118'/3'/0/1
	// "multi 2-of-3"       multi   g1ktv59sygaqxsjy68h9nvf834jfzyf5y05vszx8
	// "my key/ed25519 ✓"   local   g1xqhrd7pxw60fll0dqnf0sdfcz7ywve26psq4jv
	// "offline"            offline g1gxl0e8utkwmvrr9ux55dk6cl5xhtkvelarx5t2
	// "plain"              local   g1zekdj9fdz783xul69f7apj68chua0crtp4vxer
	// "validator"          local   g19rl4cm2hmr8afy4kldpxz3fka4jguq0a0u3773
	// valid: true
}
