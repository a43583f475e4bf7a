package hardening_test

import (
	"fmt"
	"log"

	"github.com/signerkit/signerkit/hardening"
)

// A signer's main hardens the process before it loads any key, then keeps
// key material in a Buffer that is locked and left out of core dumps.
func Example() {
	if err := hardening.DisableCoreDumps(); err != nil {
		log.Printf("core dumps stay enabled: %v", err) // not fatal
	}
	buf := hardening.Alloc(64)
	defer buf.Free() // wipes, then releases
	key := buf.Bytes()
	copy(key, "key material")
	fmt.Println(len(key))
	// Output: 64
}
