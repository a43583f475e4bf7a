package interop

import (
	"context"
	"crypto/ecdsa"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gnolang/gno/tm2/pkg/crypto"
	gnosecp "github.com/gnolang/gno/tm2/pkg/crypto/secp256k1"
	"github.com/gnolang/gno/tm2/pkg/sdk/bank"
	"github.com/gnolang/gno/tm2/pkg/std"

	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/threshold"
)

var (
	dklsServing = regexp.MustCompile(`party serving" id=\d+ addr=(\S+) metrics=(\S+)`)
	dklsAddress = regexp.MustCompile(`gno address: +(g1[0-9a-z]+)`)
	dklsGpub    = regexp.MustCompile(`gno public key: +(gpub1[0-9a-z]+)`)
)

// dklsKey is a DKLS23 key made by `signerkit threshold split -scheme
// dkls23-secp256k1`: parties 2 and 3 `signerkit party` processes, and the
// coordinator's config (holding share 1).
type dklsKey struct {
	coord      string
	parties    map[int]*nodeProc
	metrics    map[int]*skProc // each party's /metrics
	addr, gpub string
}

func startDKLSKey(t *testing.T) *dklsKey {
	t.Helper()
	dir := t.TempDir()
	keys, certs := filepath.Join(dir, "keys"), filepath.Join(dir, "certs")
	out := skRun(t, "threshold", "split", "-scheme", threshold.SchemeDKLS23, "-out", keys)
	a, g := dklsAddress.FindStringSubmatch(out), dklsGpub.FindStringSubmatch(out)
	if a == nil || g == nil {
		t.Fatalf("threshold split prints no gno address or public key:\n%s", out)
	}
	k := &dklsKey{addr: a[1], gpub: g[1], parties: map[int]*nodeProc{}, metrics: map[int]*skProc{}}
	skRun(t, "threshold", "certs", "-out", certs, "-parties", "3", "-coordinators", "1")
	var b strings.Builder
	fmt.Fprintf(&b, "scheme = %q\nshare = %q\ncert = %q\nkey = %q\nca = %q\nparty_timeout = \"2s\"\npool_size = 4\n",
		threshold.SchemeDKLS23, filepath.Join(keys, "share-1.pem"), filepath.Join(certs, "coordinator-1.crt"),
		filepath.Join(certs, "coordinator-1.key"), filepath.Join(certs, "ca.crt"))
	for _, id := range []int{2, 3} {
		listen := fmt.Sprintf("127.0.0.1:%d", freePort(t))
		cfg := filepath.Join(dir, fmt.Sprintf("party-%d.toml", id))
		text := fmt.Sprintf("scheme = %q\nshare = %q\nlisten = %q\ncert = %q\nkey = %q\nca = %q\ncoordinators = [\"coordinator-1\"]\nshutdown_grace = \"1s\"\nmetrics_addr = \"127.0.0.1:0\"\n",
			threshold.SchemeDKLS23, filepath.Join(keys, fmt.Sprintf("share-%d.pem", id)), listen,
			filepath.Join(certs, fmt.Sprintf("party-%d.crt", id)), filepath.Join(certs, fmt.Sprintf("party-%d.key", id)), filepath.Join(certs, "ca.crt"))
		if err := os.WriteFile(cfg, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		p := startNodeProc(t, fmt.Sprintf("party %d", id), exec.Command(skBin(t, "signerkit"), "party", "-config", cfg), "")
		deadline := time.Now().Add(30 * time.Second)
		var m []string
		for m = dklsServing.FindStringSubmatch(p.log.String()); m == nil; m = dklsServing.FindStringSubmatch(p.log.String()) {
			if time.Now().After(deadline) {
				t.Fatalf("party %d not serving after 30 s:\n%s", id, p.log)
			}
			time.Sleep(20 * time.Millisecond)
		}
		k.parties[id], k.metrics[id] = p, &skProc{metrics: "http://" + m[2]}
		fmt.Fprintf(&b, "\n[[party]]\nid = %d\naddr = %q\n", id, listen)
	}
	k.coord = filepath.Join(dir, "threshold.toml")
	if err := os.WriteFile(k.coord, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return k
}

func (k *dklsKey) kill(id int) {
	p := k.parties[id]
	_ = p.cmd.Process.Kill()
	p.done <- <-p.done
}

// TestDKLS23PartiesSignGnoTx: a 2-of-3 DKLS23 key whose parties 2 and 3
// are `signerkit party` processes, opened as a threshold: key as the
// daemon opens keys, signs gno transactions' sign bytes for the gnokey
// address of its group key (as split printed it, and gno computes it),
// and gno v1.7.1's secp256k1 accepts each signature and the signed
// transaction. With party 2 killed, party 3 signs; with both killed, a
// sign fails with a *threshold.NoSignerError within its deadline.
func TestDKLS23PartiesSignGnoTx(t *testing.T) {
	k := startDKLSKey(t)
	ctx := context.Background()
	s, err := signer.Open(ctx, "threshold:config="+k.coord)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	pub := gnoPub(t, s)
	from := pub.Address()
	if got := crypto.AddressToBech32(from); got != k.addr {
		t.Fatalf("gno's address of the group key is %s, split printed %s", got, k.addr)
	}
	if got := crypto.PubKeyToBech32(pub); got != k.gpub {
		t.Fatalf("gno's bech32 of the group key is %s, split printed %s", got, k.gpub)
	}
	to := crypto.AddressFromPreimage([]byte("recipient"))
	tx := std.NewTx([]std.Msg{bank.NewMsgSend(from, to, std.NewCoins(std.NewCoin("ugnot", 1000)))},
		std.NewFee(100000, std.NewCoin("ugnot", 10)), nil, "dkls23 parties")
	seq := uint64(0)
	signTx := func(what string) {
		t.Helper()
		signBytes, err := tx.GetSignBytes("dev", 7, seq)
		if err != nil {
			t.Fatal(err)
		}
		sig, err := s.SignContext(ctx, signBytes)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if !pub.VerifyBytes(signBytes, sig) {
			t.Fatalf("%s: gno refuses the signature", what)
		}
		other, _ := tx.GetSignBytes("dev", 7, seq+100)
		if pub.VerifyBytes(other, sig) {
			t.Fatalf("%s: gno accepts the signature for another sequence", what)
		}
		signed := tx
		signed.Signatures = []std.Signature{{PubKey: pub, Signature: sig}}
		if err := signed.ValidateBasic(); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if got := signed.GetSigners(); len(got) != 1 || got[0] != from {
			t.Fatalf("%s: signers %v, want %s", what, got, from)
		}
		seq++
	}
	for i := range 3 {
		signTx(fmt.Sprintf("sign %d, both parties up", i))
	}
	// Each party's /metrics, scraped from the process: the shares it sent
	// add up to at least one per signature (a hedge may ask both), and
	// every presignature it made was asked for.
	shares := 0.0
	for _, id := range []int{2, 3} {
		shares += k.metrics[id].metricSum(t, "signerkit_party_shares_total")
		if made := k.metrics[id].metricSum(t, "signerkit_party_presigned_total"); made < k.metrics[id].metricSum(t, "signerkit_party_shares_total") {
			t.Errorf("party %d sent more shares than it made presignatures (%v)", id, made)
		}
	}
	if shares < 3 || shares > 6 {
		t.Fatalf("the parties sent %v shares for 3 signatures, want 3 to 6", shares)
	}
	k.kill(2)
	for i := range 3 {
		signTx(fmt.Sprintf("sign %d, party 2 killed", i))
	}
	k.kill(3)
	dctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	start := time.Now()
	_, err = s.SignContext(dctx, []byte("both parties killed"))
	var ne *threshold.NoSignerError
	if !errors.As(err, &ne) || !errors.Is(err, signer.ErrDeviceNotFound) {
		t.Fatalf("both parties killed: %v, want a *threshold.NoSignerError", err)
	}
	if d := time.Since(start); d > 5*time.Second { // a hang guard, wide for a loaded machine
		t.Fatalf("the failing sign took %v, far past its 2 s deadline", d)
	}
}

// gnoPub returns a secp256k1 signer's public key as gno's type.
func gnoPub(t *testing.T, s signer.Signer) gnosecp.PubKeySecp256k1 {
	t.Helper()
	k, ok := s.Public().(*ecdsa.PublicKey)
	if !ok {
		t.Fatalf("public key %T, want *ecdsa.PublicKey", s.Public())
	}
	b, err := signer.MarshalSecp256k1PublicKey(k)
	if err != nil {
		t.Fatal(err)
	}
	var pub gnosecp.PubKeySecp256k1
	copy(pub[:], b)
	return pub
}
