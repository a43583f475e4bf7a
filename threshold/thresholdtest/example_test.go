package thresholdtest_test

import (
	"context"
	"fmt"

	"github.com/signerkit/signerkit/threshold"
	"github.com/signerkit/signerkit/threshold/thresholdtest"
)

// A cluster whose coordinator holds share 1 itself and signs with one of
// the two remote parties.
func Example() {
	c, err := thresholdtest.Start(thresholdtest.Options{Local: true})
	if err != nil {
		panic(err)
	}
	defer c.Close()
	s, err := threshold.New(c.Config)
	if err != nil {
		panic(err)
	}
	defer s.Close()
	if _, err := s.SignContext(context.Background(), []byte("vote")); err != nil {
		panic(err)
	}
	fmt.Println(len(c.Config.Parties), "remote parties")
	// Output: 2 remote parties
}
