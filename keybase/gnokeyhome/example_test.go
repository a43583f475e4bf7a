package gnokeyhome_test

import (
	"context"
	"crypto/ed25519"
	"fmt"
	"log"
	"path/filepath"

	"github.com/signerkit/signerkit/keybase/gnokeyhome"
	"github.com/signerkit/signerkit/signer"
)

// Every key of a gnokey home, as `gnokey list` shows them, and a sign with
// one of them, selected by its gnokey name.
func Example() {
	// The fixture, read where it is: reading writes nothing. In real
	// use: "" for gnokey's default home.
	home := filepath.Join("testdata", "gnokey-home")
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
