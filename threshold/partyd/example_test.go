package partyd_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/signerkit/signerkit/threshold"
	"github.com/signerkit/signerkit/threshold/frost"
	"github.com/signerkit/signerkit/threshold/partyd"
)

// One party of a 2-of-3 key, from its files: share, certificate, config.
func Example() {
	dir, _ := os.MkdirTemp("", "partyd")
	defer os.RemoveAll(dir)
	dealt, _ := frost.SplitSeed(bytes.Repeat([]byte{1}, 32), 2, 3, rand.Reader)
	threshold.WriteShareFiles(dir, dealt.Shares, dealt.Public)
	threshold.WriteCerts(dir, 3, 1, time.Hour)
	os.WriteFile(filepath.Join(dir, "party.toml"), []byte(`share = "share-2.pem"
listen = "127.0.0.1:0"
cert = "party-2.crt"
key = "party-2.key"
ca = "ca.crt"
coordinators = ["coordinator-1"]
state_dir = "state"
chains = ["my-chain"]
`), 0o600)

	setup, err := threshold.LoadPartyFile(filepath.Join(dir, "party.toml"))
	if err != nil {
		panic(err)
	}
	defer setup.Close()
	missing, _ := setup.MissingState()
	fmt.Println("no state yet for", missing)
	if _, err := setup.InitState(context.Background(), 1); err != nil {
		panic(err)
	}
	s, err := partyd.New(setup, nil)
	if err != nil {
		panic(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- s.Run(ctx) }()
	fmt.Println("serving party", s.Party().ID())
	cancel()
	fmt.Println(<-done)
	// Output:
	// no state yet for [my-chain]
	// serving party 2
	// <nil>
}
