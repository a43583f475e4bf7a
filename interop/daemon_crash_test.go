package interop

import (
	"bufio"
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"math/big"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gnolang/gno/tm2/pkg/bft/privval/upstream"
	gnotypes "github.com/gnolang/gno/tm2/pkg/bft/types"

	spv "github.com/signerkit/signerkit/privval"
)

// TestDaemonSIGKILLNeverDoubleSigns: gno v1.7.1's tmkms_listener streams
// prevotes to the signerkit binary (key in a keybase, which keeps no
// double-sign state of its own), which is killed with SIGKILL at random
// points and restarted on the same state dir. Each attempt at a height
// carries a new block id, so a second signature at a height would be a
// double sign: none may happen, and every signature gno received must be
// in the state after the kill.
//
// What this test cannot catch: SIGKILL ends the process, not the kernel,
// so every write the signer made — synced or not — is still in the page
// cache and is read back after the restart. A missing fsync/fdatasync
// passes here. Durability rests on the guard package's own tests, which
// inject storage faults through a guard.FS (faultFS): TestStorageFailures
// in guard/guard_test.go (ENOSPC on write, a torn write, EIO on sync: no
// signature leaves and the state reads back whole). guard's TestCrash is
// SIGKILL too and has the same blind spot; no test here or in guard
// simulates a power cut that drops unsynced writes.
func TestDaemonSIGKILLNeverDoubleSigns(t *testing.T) {
	const kills = 6
	b := newBackend(t, "keybase", 0x74)
	ln := pvListen(t, "unix")
	cfgPath, _ := skSetup(t, "tm2-tmkms", b.uri, "  addr = \"unix://"+ln.Addr().String()+"\"")
	sc, err := upstream.NewSignerClient(upstream.NewSignerListenerEndpoint(nopSlog(), upstream.NewUnixListener(ln.(*net.UnixListener))), skChain)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sc.Close() })

	signed := map[int64][]byte{}  // height → sign bytes signed there
	uncertain := map[int64]bool{} // heights whose answer was lost without a kill
	var answered int64
	h, refusals := int64(1), 0
	ts := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	for run := 0; run < kills; run++ {
		p := skStart(t, cfgPath)
		if run == 0 {
			if err := sc.Init(20 * time.Second); err != nil {
				t.Fatal(err)
			}
		}
		n, _ := rand.Int(rand.Reader, big.NewInt(60))
		killing, killed := make(chan struct{}), make(chan struct{})
		go func() {
			time.Sleep(time.Duration(n.Int64()+20) * time.Millisecond)
			close(killing)
			_ = p.cmd.Process.Kill()
			close(killed)
		}()
		for {
			tag := make([]byte, 1)
			_, _ = rand.Read(tag)
			v := &gnotypes.Vote{Type: gnotypes.PrevoteType, Height: h, BlockID: gnoBlockID(tag[0], byte(run), 1), Timestamp: ts,
				ValidatorAddress: sc.PubKey().Address()}
			err := sc.SignVote(skChain, v)
			var rse *upstream.WrappedRemoteSignerError
			if errors.As(err, &rse) {
				if rse.Code != int32(spv.CodeDoubleSign) || signed[h] == nil && !uncertain[h] {
					t.Fatalf("height %d refused: %v", h, err)
				}
				refusals++
				h++
				continue
			}
			if err != nil {
				select {
				case <-killing:
				default:
					// Not the kill (gno's endpoint timed out): the signer may
					// have signed h without gno seeing it.
					t.Logf("height %d: %v (before the kill)", h, err)
					uncertain[h] = true
					continue
				}
				break
			}
			sb := v.SignBytes(skChain)
			if !ed25519.Verify(b.pub, sb, v.Signature) {
				t.Fatalf("height %d: signature does not verify", h)
			}
			if old := signed[h]; old != nil && !bytes.Equal(old, sb) {
				t.Fatalf("DOUBLE SIGN at height %d", h)
			}
			signed[h], answered = sb, max(answered, h)
			h++
		}
		<-killed
		<-p.done
		p.done <- nil
		height := skStateHeight(t, cfgPath)
		if height < answered {
			t.Fatalf("after SIGKILL the state is at %d, but gno received a signature at %d", height, answered)
		}
		if height > answered && signed[height] == nil {
			signed[height] = []byte("signed; the answer died with the process")
		}
	}
	t.Logf("%d heights signed over %d SIGKILLs; %d re-requests refused", answered, kills, refusals)
	if answered < kills {
		t.Fatalf("only %d heights signed", answered)
	}
}

// skStateHeight runs `signerkit state show` and returns the chain's height.
func skStateHeight(t *testing.T, cfgPath string) int64 {
	t.Helper()
	out, err := exec.Command(skBin(t, "signerkit"), "state", "show", "-config", cfgPath).CombinedOutput()
	if err != nil {
		t.Fatalf("state show: %v\n%s", err, out)
	}
	s := bufio.NewScanner(bytes.NewReader(out))
	for s.Scan() {
		f := strings.Fields(s.Text())
		if len(f) >= 2 && f[0] == skChain {
			h, err := strconv.ParseInt(f[1], 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return h
		}
	}
	t.Fatalf("no state:\n%s", out)
	return 0
}
