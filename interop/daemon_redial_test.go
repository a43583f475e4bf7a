package interop

import (
	"crypto/ed25519"
	"fmt"
	"net"
	"testing"
	"time"

	cmtlog "github.com/cometbft/cometbft/libs/log"
	"github.com/cometbft/cometbft/privval"
)

// TestDaemonRedialCometBFTRestart: a CometBFT v0.38 node restarting, as
// its node package starts its privval listener (privval.NewSignerListener
// on priv_validator_laddr, a fresh identity each start, then
// NewSignerClient and GetPubKey, which waits 3 s for a signer to dial
// in). The node is down long enough for a growing backoff to pass 3 s;
// each restart on the same address must still get signerkit within
// CometBFT's own window, since redial_max_backoff caps the wait at 0.5 s
// (with the former 5 s cap, a wait of 2.5 to 5 s was due by then). The
// bound checked is 2 s, not 0.5 s, for a loaded machine's sake; the
// times measured are logged.
// A stock node cannot be pinned (new identity each start), so the
// validator is allow_any.
func TestDaemonRedialCometBFTRestart(t *testing.T) {
	b := newBackend(t, "keybase", 0x78)
	ln := pvListen(t, "tcp")
	addr := ln.Addr().String()
	_ = ln.Close()
	cfgPath, _ := skSetup(t, "cometbft-v0.38", b.uri, fmt.Sprintf("  addr = \"tcp://%s\"\n  allow_any = true", addr))
	p := skStart(t, cfgPath)
	for i := range 2 {
		// The node is down: signerkit's dials are refused meanwhile.
		time.Sleep(6 * time.Second)
		start := time.Now()
		ep, err := privval.NewSignerListener("tcp://"+addr, cmtlog.NewNopLogger())
		if err != nil {
			t.Fatalf("restart %d: listen on %s again: %v", i, addr, err)
		}
		sc, err := privval.NewSignerClient(ep, skChain)
		if err != nil {
			t.Fatal(err)
		}
		pk, err := sc.GetPubKey() // CometBFT's own wait: its listener's 3 s accept timeout
		if err != nil {
			_ = ep.Stop()
			t.Fatalf("restart %d: no signer within CometBFT's start-up window: %v", i, err)
		}
		if !b.pub.Equal(ed25519.PublicKey(pk.Bytes())) {
			t.Fatalf("public key %x", pk.Bytes())
		}
		took := time.Since(start)
		t.Logf("restart %d: signerkit connected %v after the listener came back", i, took.Round(time.Millisecond))
		if took > 2*time.Second {
			t.Errorf("restart %d: signerkit redialed %v after the listener came back, want within redial_max_backoff (0.5 s)", i, took)
		}
		if err := ep.Stop(); err != nil {
			t.Fatal(err)
		}
		if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			_ = c.Close()
			t.Fatalf("restart %d: the listener is still up after Stop", i)
		}
	}
	p.stop(t)
}
