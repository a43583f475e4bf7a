package migrate_test

import (
	"fmt"
	"log"

	"github.com/signerkit/signerkit/guard/migrate"
)

func Example() {
	// tmkms's state after a precommit (its step 2) at height 1200, round 1.
	st, err := migrate.Parse([]byte(`{"height":"1200","round":"1","step":2,"block_id":null}`))
	if err != nil {
		log.Fatal(err)
	}
	next, exact, err := st.Resume("cosmoshub-4")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(st.Format, st)
	fmt.Printf("resume at %d/%d, exact %v\n", next.Height, next.Round, exact)
	// Output:
	// tmkms 1200/1/3 (tmkms step 2)
	// resume at 1200/2, exact true
}
