package threshold_test

import (
	"context"
	"crypto/ed25519"
	"crypto/tls"
	"fmt"
	"testing"
	"time"

	"github.com/signerkit/signerkit/guard"
	"github.com/signerkit/signerkit/threshold"
	"github.com/signerkit/signerkit/threshold/frost"
	"github.com/signerkit/signerkit/threshold/thresholdtest"
)

// TestOwnersLostOnPartyRestart: a party keeps in memory which coordinator
// each nonce pair went to, and a restart forgets it (owners.go says why
// that is safe). Party 1 restarts on its nonce file; a second coordinator
// starting then is handed the first one's outstanding pairs too, signs
// and releases them all at its Close. The first coordinator, with party 2
// down so that it must use party 1, finds its pairs used, refills its pool
// and goes on: every sign succeeds and verifies, and party 1 never makes
// a share from a pair it used or released (each such request is counted
// as NonceUsed, not signed).
func TestOwnersLostOnPartyRestart(t *testing.T) {
	dirs := map[frost.Identifier]guard.FS{}
	for id := frost.Identifier(1); id <= 3; id++ {
		dirs[id] = guard.DirFS(t.TempDir())
	}
	c, err := thresholdtest.Start(thresholdtest.Options{Coordinators: []string{"coordinator-2"},
		NonceFS: func(id frost.Identifier) guard.FS { return dirs[id] }})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	cfg := c.Config
	cfg.PoolSize = 16
	cfg.HedgeAfter = -1
	s1 := newSigner(t, cfg)
	pub := s1.Public().(ed25519.PublicKey)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sign := func(s *threshold.Signer, i int) {
		t.Helper()
		msg := []byte(fmt.Sprintf("message %d", i))
		sig, err := s.SignContext(ctx, msg)
		if err != nil || !ed25519.Verify(pub, msg, sig) {
			t.Fatalf("sign %d: %v", i, err)
		}
	}
	for i := range 3 {
		sign(s1, i)
	}
	held := stats(s1, 1).Pool
	c.Stop(1)
	if err := c.Restart(1); err != nil {
		t.Fatal(err)
	}
	cert, err := c.Cert("coordinator-2", true)
	if err != nil {
		t.Fatal(err)
	}
	cfg2 := cfg
	cfg2.TLS = &tls.Config{Certificates: []tls.Certificate{cert}, RootCAs: c.CAPool()}
	s2, err := threshold.New(cfg2)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		sign(s2, 100+i)
	}
	got := stats(s2, 1).Pool
	s2.Close()
	c.Stop(2)
	for i := range 30 {
		sign(s1, 200+i)
	}
	served := c.Party(1).ServeStats()
	t.Logf("coordinator 1 held %d of party 1's pairs; coordinator 2 took %d at its start; party 1 then served %+v", held, got, served)
	if served.Shares < 30 {
		t.Fatalf("party 1 gave %d shares for coordinator 1's 30 signs with party 2 down", served.Shares)
	}
}
