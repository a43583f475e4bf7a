package threshold_test

import (
	"context"
	"crypto/ed25519"
	"fmt"

	"github.com/signerkit/signerkit/threshold"
	"github.com/signerkit/signerkit/threshold/thresholdtest"
)

// Three parties on loopback, each holding a share of a 2-of-3 key, and a
// coordinator that signs with any two of them.
func Example() {
	cluster, err := thresholdtest.Start(thresholdtest.Options{})
	if err != nil {
		panic(err)
	}
	defer cluster.Close()

	s, err := threshold.New(cluster.Config)
	if err != nil {
		panic(err)
	}
	defer s.Close()

	msg := []byte("precommit at height 42")
	sig, err := s.SignContext(context.Background(), msg)
	if err != nil {
		panic(err)
	}
	fmt.Println(ed25519.Verify(s.Public().(ed25519.PublicKey), msg, sig))

	// With party 2 down, parties 1 and 3 sign.
	cluster.Stop(2)
	sig, err = s.SignContext(context.Background(), msg)
	if err != nil {
		panic(err)
	}
	fmt.Println(ed25519.Verify(s.Public().(ed25519.PublicKey), msg, sig))
	// Output:
	// true
	// true
}
