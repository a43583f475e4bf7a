package main

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/signerkit/signerkit/guard"
	"github.com/signerkit/signerkit/keybase"
	"github.com/signerkit/signerkit/privval"
	"github.com/signerkit/signerkit/privval/privvaltest"
	"github.com/signerkit/signerkit/signbytes"
	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/threshold"
	"github.com/signerkit/signerkit/threshold/frost"
)

// thrValidatorJSON writes a CometBFT priv_validator_key.json.
func thrValidatorJSON(t *testing.T, path string, seed byte) ed25519.PublicKey {
	t.Helper()
	priv := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{seed}, 32))
	pub := priv.Public().(ed25519.PublicKey)
	js := fmt.Sprintf(`{"address":%q,"pub_key":{"type":"tendermint/PubKeyEd25519","value":%q},"priv_key":{"type":"tendermint/PrivKeyEd25519","value":%q}}`,
		CometBFTAddress(pub), base64.StdEncoding.EncodeToString(pub), base64.StdEncoding.EncodeToString(priv))
	if err := os.WriteFile(path, []byte(js), 0o600); err != nil {
		t.Fatal(err)
	}
	return pub
}

// thrRunOK runs a command in process and fails the test on an error.
func thrRunOK(t *testing.T, args ...string) string {
	t.Helper()
	var out, errb bytes.Buffer
	if err := run(args, &out, &errb); err != nil {
		t.Fatalf("signerkit %s: %v\n%s%s", strings.Join(args, " "), err, out.String(), errb.String())
	}
	return out.String()
}

// thrSplitKey splits a validator key 2-of-3 and makes the certificates,
// as an operator does, in dir/keys and dir/certs.
func thrSplitKey(t *testing.T, dir string, seed byte) ed25519.PublicKey {
	t.Helper()
	pub := thrValidatorJSON(t, filepath.Join(dir, "priv_validator_key.json"), seed)
	out := thrRunOK(t, "threshold", "split", "-from", filepath.Join(dir, "priv_validator_key.json"), "-out", filepath.Join(dir, "keys"), "-t", "2", "-n", "3")
	if !strings.Contains(out, fmt.Sprintf("%x", []byte(pub))) {
		t.Fatalf("split does not show the validator's key as the group key:\n%s", out)
	}
	thrRunOK(t, "threshold", "certs", "-out", filepath.Join(dir, "certs"), "-parties", "3", "-coordinators", "2")
	for _, f := range []string{"keys/share-1.pem", "keys/public.pem", "certs/ca.key", "certs/party-2.key", "certs/coordinator-2.crt"} {
		if fi, err := os.Stat(filepath.Join(dir, f)); err != nil || fi.Mode().Perm() != 0o600 {
			t.Fatalf("%s: %v, %v", f, fi, err)
		}
	}
	return pub
}

// thrPartyConfig writes party id's config in dir/party-<id>.
func thrPartyConfig(t *testing.T, dir string, id int, listen, coordinators string) string {
	t.Helper()
	pd := filepath.Join(dir, fmt.Sprintf("party-%d", id))
	if err := os.MkdirAll(pd, 0o700); err != nil {
		t.Fatal(err)
	}
	cfg := fmt.Sprintf(`share = "../keys/share-%d.pem"
listen = %q
cert = "../certs/party-%d.crt"
key = "../certs/party-%d.key"
ca = "../certs/ca.crt"
coordinators = [%s]
state_dir = "state"
chains = ["test-chain"]
metrics_addr = "127.0.0.1:0"
shutdown_grace = "2s"
`, id, listen, id, id, coordinators)
	path := filepath.Join(pd, "party.toml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

var thrPartyAddrs = regexp.MustCompile(`party serving" id=\d+ addr=(\S+) metrics=(\S+)`)

// thrStartParty starts `signerkit party` and returns it with its addresses.
func thrStartParty(t *testing.T, cfg string) (p *proc, addr, metrics string) {
	t.Helper()
	p = startProc(t, "party", "-config", cfg)
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if m := thrPartyAddrs.FindStringSubmatch(p.log.String()); m != nil {
			return p, m[1], m[2]
		}
		select {
		case err := <-p.done:
			p.done <- err
			t.Fatalf("party exited: %v\n%s", err, p.log)
		case <-time.After(20 * time.Millisecond):
		}
	}
	t.Fatalf("party not serving after 30 s:\n%s", p.log)
	return nil, "", ""
}

// thrCoordinatorConfig writes coordinator n's config for the parties at
// addrs (by id - 1).
func thrCoordinatorConfig(t *testing.T, dir string, n int, addrs []string, pins []string) string {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "public = \"keys/public.pem\"\ncert = \"certs/coordinator-%d.crt\"\nkey = \"certs/coordinator-%d.key\"\nca = \"certs/ca.crt\"\nparty_timeout = \"1s\"\n", n, n)
	for i, a := range addrs {
		fmt.Fprintf(&b, "\n[[party]]\nid = %d\naddr = %q\n", i+1, a)
		if pins != nil {
			fmt.Fprintf(&b, "pin = %q\n", pins[i])
		}
	}
	path := filepath.Join(dir, fmt.Sprintf("coordinator-%d.toml", n))
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func thrPartyMetric(t *testing.T, addr, name string) string {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(name) + ` (\S+)$`).FindSubmatch(body)
	if m == nil {
		t.Fatalf("no %s in:\n%s", name, body)
	}
	return string(m[1])
}

// TestThresholdValidator, processes end to end: a validator key split
// 2-of-3, certificates made, three `signerkit party` processes, and a
// daemon whose key is threshold:config=…, serving a validator. Every
// signature (proposal, prevote, precommit at each height) verifies under
// the validator's own public key with crypto/ed25519. With one party
// killed, signing goes on; with a second one stopped (SIGSTOP), the
// validator gets a refusal within the sign deadline; when the first comes
// back on its state, signing resumes; SIGTERM stops a party, exit 0.
func TestThresholdValidator(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	pub := thrSplitKey(t, dir, 11)
	var parties []*proc
	var addrs, metrics, cfgs []string
	listen := thrFreeAddrs(t, 3)
	for id := 1; id <= 3; id++ {
		cfg := thrPartyConfig(t, dir, id, listen[id-1], `"coordinator-1", "coordinator-2"`)
		cfgs = append(cfgs, cfg)
		if id == 1 {
			p := startProc(t, "party", "-config", cfg)
			if err := p.wait(t); err == nil || !strings.Contains(p.log.String(), "-init-height H") {
				t.Fatalf("a party without state started: %v\n%s", err, p.log)
			}
		}
		thrRunOK(t, "party", "-config", cfg, "-init-height", "1")
		p, addr, m := thrStartParty(t, cfg)
		parties, addrs, metrics = append(parties, p), append(addrs, addr), append(metrics, m)
	}
	coord := thrCoordinatorConfig(t, dir, 1, addrs, nil)
	uri := "threshold:config=" + coord

	// init checks the threshold key's config.
	bad := thrCoordinatorConfig(t, dir, 2, addrs[:1], nil)
	err := run([]string{"init", "-home", filepath.Join(dir, "bad"), "-key", "threshold:config=" + bad}, io.Discard, io.Discard)
	var cfe *threshold.ConfigFileError
	if !errors.As(err, &cfe) || cfe.Key != "party" || !strings.Contains(err.Error(), "at least 2 are needed") {
		t.Fatalf("init with a threshold key of one party for a 2-of-3 key: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "bad")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("init wrote %s for a key it refused: %v", filepath.Join(dir, "bad"), err)
	}
	thrRunOK(t, "init", "-home", filepath.Join(dir, "good"), "-key", uri)
	out := thrRunOK(t, "keys", "show", uri)
	if !strings.Contains(out, fmt.Sprintf("%x", []byte(pub))) {
		t.Fatalf("keys show %s:\n%s", uri, out)
	}

	ln := listener(t, "unix")
	_, cfgPath := setup(t, "cometbft-v0.34", uri, "unix://"+ln.Address(), "")
	startProc(t, "start", "-config", cfgPath)
	c := accept(t, ln)
	h := int64(1)
	signHeight := func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		return thrSignHeight(ctx, t, c, pub, h)
	}
	for ; h <= 3; h++ {
		if err := signHeight(); err != nil {
			t.Fatalf("height %d: %v", h, err)
		}
	}
	thrSecondCoordinator(t, dir, addrs, pub)
	_ = parties[0].cmd.Process.Kill()
	for ; h <= 6; h++ {
		if err := signHeight(); err != nil {
			t.Fatalf("height %d, party 1 down: %v", h, err)
		}
	}
	if v := thrPartyMetric(t, metrics[2], "signerkit_party_shares_total"); v == "0" {
		t.Errorf("party 3 sent no share")
	}
	// Party 2 stops answering (SIGSTOP: its connections stay open), so
	// only party 3 answers: the validator gets a refusal within the sign
	// deadline (sign_timeout, 5 s), not a hang.
	_ = parties[1].cmd.Process.Signal(syscall.SIGSTOP)
	start := time.Now()
	err = signHeight()
	var rse *privvaltest.RemoteSignerError
	if !errors.As(err, &rse) {
		t.Fatalf("height %d with two parties down: %v, want a refusal", h, err)
	}
	t.Logf("party 1 down, party 2 stopped: refused after %v: %v", time.Since(start).Round(time.Millisecond), rse)
	// Party 1 restarts on its state (nonce store, guard): signing resumes.
	parties[0], _, _ = thrStartParty(t, cfgs[0])
	start = time.Now()
	for h++; ; {
		err := signHeight()
		if err == nil {
			break
		}
		if !errors.As(err, &rse) || time.Since(start) > 60*time.Second {
			t.Fatalf("height %d after party 1 restarted: %v", h, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("signing resumed %v after party 1 restarted", time.Since(start).Round(time.Millisecond))
	// SIGTERM stops the last party cleanly.
	_ = parties[2].cmd.Process.Signal(syscall.SIGTERM)
	if err := parties[2].wait(t); err != nil {
		t.Fatalf("party 3 after SIGTERM: %v\n%s", err, parties[2].log)
	}
}

// thrSecondCoordinator starts a second daemon, coordinator-2 with a state of
// its own, over the same parties, after the first signed heights 1 to 3:
// a prevote at height 3 for another block is refused as a double sign by
// the parties' guards, which saw the first daemon's (docs/threshold.md:
// any two pairs of the three share a party); the precommit the first
// signed at height 3, the same bytes, is signed.
func thrSecondCoordinator(t *testing.T, dir string, addrs []string, pub ed25519.PublicKey) {
	t.Helper()
	uri := "threshold:config=" + thrCoordinatorConfig(t, dir, 2, addrs, nil)
	ln := listener(t, "unix")
	_, cfgPath := setup(t, "cometbft-v0.34", uri, "unix://"+ln.Address(), "")
	p := startProc(t, "start", "-config", cfgPath)
	c := accept(t, ln)
	defer func() {
		c.Close()
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		_ = p.wait(t)
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	v := prevote(3, []byte{0xee})
	_, err := c.SignVote(ctx, "test-chain", v)
	var rse *privvaltest.RemoteSignerError
	if !errors.As(err, &rse) || rse.Code != privval.CodeDoubleSign {
		t.Fatalf("coordinator 2, a conflicting prevote at height 3: %v, want a double-sign refusal", err)
	}
	// The precommit the first daemon signed at height 3, the same bytes:
	// signed again (the parties' guards admit the same message).
	bid := signbytes.BlockID{Hash: bytes.Repeat([]byte{3}, 32), PartSetHeader: signbytes.PartSetHeader{Total: 1, Hash: bytes.Repeat([]byte{7}, 32)}}
	ts := time.Date(2026, 1, 1, 0, 0, 3, 0, time.UTC)
	got, err := c.SignVote(ctx, "test-chain", &privvaltest.Vote{Phase: signbytes.Precommit, Height: 3, BlockID: bid, Timestamp: ts, ValidatorAddress: make([]byte, 20)})
	if err != nil {
		t.Fatalf("coordinator 2, the precommit signed at height 3: %v", err)
	}
	thrCheckSig(t, pub, signbytes.Message{Phase: signbytes.Precommit, Height: 3, BlockID: bid, Timestamp: ts}, got.Signature)
}

// thrSignHeight signs a proposal, a prevote and a precommit at height h
// and checks each signature under pub against the sign bytes.
func thrSignHeight(ctx context.Context, t *testing.T, c *privvaltest.Client, pub ed25519.PublicKey, h int64) error {
	t.Helper()
	ts := time.Date(2026, 1, 1, 0, 0, int(h), 0, time.UTC)
	bid := signbytes.BlockID{Hash: bytes.Repeat([]byte{byte(h)}, 32), PartSetHeader: signbytes.PartSetHeader{Total: 1, Hash: bytes.Repeat([]byte{7}, 32)}}
	p, err := c.SignProposal(ctx, "test-chain", &privvaltest.Proposal{Height: h, POLRound: -1, BlockID: bid, Timestamp: ts})
	if err != nil {
		return err
	}
	thrCheckSig(t, pub, signbytes.Message{Phase: signbytes.Proposal, Height: h, POLRound: -1, BlockID: bid, Timestamp: ts}, p.Signature)
	for _, ph := range []signbytes.Phase{signbytes.Prevote, signbytes.Precommit} {
		v, err := c.SignVote(ctx, "test-chain", &privvaltest.Vote{Phase: ph, Height: h, BlockID: bid, Timestamp: ts, ValidatorAddress: make([]byte, 20)})
		if err != nil {
			return err
		}
		thrCheckSig(t, pub, signbytes.Message{Phase: ph, Height: h, BlockID: bid, Timestamp: ts}, v.Signature)
	}
	return nil
}

func thrCheckSig(t *testing.T, pub ed25519.PublicKey, m signbytes.Message, sig []byte) {
	t.Helper()
	m.Format, m.ChainID = signbytes.CometBFT, "test-chain"
	sb, err := m.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	if !ed25519.Verify(pub, sb, sig) {
		t.Fatalf("%v: the signature does not verify under the validator's key", m)
	}
}

// thrFreeAddrs returns n loopback addresses free a moment ago.
func thrFreeAddrs(t *testing.T, n int) []string {
	t.Helper()
	var addrs []string
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addrs = append(addrs, l.Addr().String())
		l.Close()
	}
	return addrs
}

// TestThresholdDKG: three `signerkit threshold dkg` participants (in
// process, at once) make a 2-of-3 key with the certificates of
// `threshold certs`; all write the same public key, and two of the shares
// sign for it (crypto/ed25519 verifies). A participant of another
// ceremony is refused.
func TestThresholdDKG(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	thrRunOK(t, "threshold", "certs", "-out", filepath.Join(dir, "certs"))
	addrs := thrFreeAddrs(t, 3)
	dkg := func(id int, ceremony string) error {
		var peers []string
		for j := 1; j <= 3; j++ {
			if j != id {
				peers = append(peers, fmt.Sprintf("%d=%s", j, addrs[j-1]))
			}
		}
		c := filepath.Join(dir, "certs")
		var out bytes.Buffer
		err := run([]string{"threshold", "dkg", "-id", fmt.Sprint(id), "-ceremony", ceremony, "-listen", addrs[id-1], "-peers", strings.Join(peers, ","),
			"-cert", filepath.Join(c, fmt.Sprintf("party-%d.crt", id)), "-key", filepath.Join(c, fmt.Sprintf("party-%d.key", id)), "-ca", filepath.Join(c, "ca.crt"),
			"-out", filepath.Join(dir, fmt.Sprintf("p%d", id)), "-timeout", "20s"}, &out, &out)
		if err != nil {
			return fmt.Errorf("%w\n%s", err, out.String())
		}
		return nil
	}
	errs := make(chan error, 3)
	for id := 1; id <= 3; id++ {
		go func() { errs <- dkg(id, "test ceremony 1") }()
	}
	for range 3 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	var keys []*frost.KeyPackage
	var pub *frost.PublicKeyPackage
	for id := 1; id <= 3; id++ {
		k, p, err := threshold.LoadShare(filepath.Join(dir, fmt.Sprintf("p%d", id), fmt.Sprintf("share-%d.pem", id)))
		if err != nil {
			t.Fatal(err)
		}
		if pub != nil && !bytes.Equal(p.GroupPublicKey(), pub.GroupPublicKey()) {
			t.Fatalf("participant %d got another group key", id)
		}
		keys, pub = append(keys, k), p
	}
	msg := []byte("prevote")
	var list []frost.SigningCommitments
	var nonces []*frost.SigningNonces
	for _, k := range []*frost.KeyPackage{keys[0], keys[2]} {
		nn, err := frost.Commit(k, rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		nonces, list = append(nonces, nn), append(list, nn.Commitments())
	}
	var shares []frost.SignatureShare
	for i, k := range []*frost.KeyPackage{keys[0], keys[2]} {
		s, err := frost.Sign(k, nonces[i], msg, list)
		if err != nil {
			t.Fatal(err)
		}
		shares = append(shares, s)
	}
	sig, err := frost.Aggregate(pub, msg, list, shares)
	if err != nil || !ed25519.Verify(pub.GroupPublicKey(), msg, sig) {
		t.Fatalf("shares 1 and 3 of the DKG's key: %v", err)
	}
	// Participant 3 of another ceremony: 1 and 2 refuse it.
	addrs = thrFreeAddrs(t, 3)
	dir = filepath.Join(dir, "second")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(filepath.Dir(dir), "certs"), filepath.Join(dir, "certs")); err != nil {
		t.Fatal(err)
	}
	for id := 1; id <= 3; id++ {
		ceremony := "test ceremony 2"
		if id == 3 {
			ceremony = "another ceremony"
		}
		go func() { errs <- dkg(id, ceremony) }()
	}
	for range 3 {
		if err := <-errs; err == nil {
			t.Fatal("a participant finished a key generation with a participant of another ceremony")
		}
	}
}

// TestThresholdShareCommands, in process: show, export and import of a
// share, and the errors of split.
func TestThresholdShareCommands(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	pub := thrSplitKey(t, dir, 12)
	share := filepath.Join(dir, "keys", "share-2.pem")
	out := thrRunOK(t, "threshold", "show", "-share", share)
	if !strings.Contains(out, "share of participant 2") || !strings.Contains(out, "2 of 3") || !strings.Contains(out, fmt.Sprintf("%x", []byte(pub))) {
		t.Errorf("show:\n%s", out)
	}
	if out := thrRunOK(t, "threshold", "show", "-share", filepath.Join(dir, "keys", "public.pem")); !strings.Contains(out, "public key file") {
		t.Errorf("show of the public key:\n%s", out)
	}
	passFile := func(name, pass string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(pass+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		return "file:" + p
	}
	right, wrong := passFile("pass", "correct horse"), passFile("wrong", "correct horsf")
	enc := filepath.Join(dir, "share-2.enc")
	thrRunOK(t, "threshold", "export", "-share", share, "-out", enc, "-passphrase-source", right, "-scrypt-log-n", "10")
	restored := filepath.Join(dir, "restored.pem")
	if err := run([]string{"threshold", "import", "-from", enc, "-out", restored, "-passphrase-source", wrong}, io.Discard, io.Discard); !errors.Is(err, signer.ErrWrongPassphrase) {
		t.Fatalf("import with a wrong passphrase: %v", err)
	}
	thrRunOK(t, "threshold", "import", "-from", enc, "-out", restored, "-passphrase-source", right)
	a, _ := os.ReadFile(share)
	b, _ := os.ReadFile(restored)
	if !bytes.Equal(a, b) {
		t.Fatal("the imported share is not the exported one")
	}
	if err := run([]string{"threshold", "import", "-from", enc, "-out", restored, "-passphrase-source", right}, io.Discard, io.Discard); err == nil {
		t.Fatal("import overwrote a share file")
	}
	key := filepath.Join(dir, "priv_validator_key.json")
	for _, c := range []struct {
		args []string
		code int
	}{
		{[]string{"-from", key, "-out", filepath.Join(dir, "k2"), "-t", "4", "-n", "3"}, 1},
		{[]string{"-from", key, "-out", filepath.Join(dir, "keys")}, 1}, // exists
		{[]string{"-from", filepath.Join(dir, "keys", "public.pem"), "-out", filepath.Join(dir, "k3")}, 1},
		{[]string{"-from", key}, 2},
	} {
		if code, _, _ := runIn(append([]string{"threshold", "split"}, c.args...)...); code != c.code {
			t.Errorf("split %v: exit %d, want %d", c.args, code, c.code)
		}
	}
}

// TestThresholdSplitDKLS23: split -scheme dkls23-secp256k1 makes a new
// key's three share files and prints its gno address, which show prints
// for each share and which is keybase's address of the shares' key.
func TestThresholdSplitDKLS23(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	out := thrRunOK(t, "threshold", "split", "-scheme", threshold.SchemeDKLS23, "-out", filepath.Join(dir, "keys"))
	m := regexp.MustCompile(`gno address: +(g1[0-9a-z]+)`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("split prints no gno address:\n%s", out)
	}
	for id := 1; id <= 3; id++ {
		path := filepath.Join(dir, "keys", fmt.Sprintf("share-%d.pem", id))
		s, err := threshold.LoadDKLS23Share(path)
		if err != nil {
			t.Fatal(err)
		}
		pub, err := signer.ParseSecp256k1PublicKey(s.PublicKey())
		if err != nil {
			t.Fatal(err)
		}
		if addr, err := keybase.Address(pub); err != nil || addr != m[1] {
			t.Fatalf("share %d's key has address %s (%v), split printed %s", id, addr, err, m[1])
		}
		if show := thrRunOK(t, "threshold", "show", "-share", path); !strings.Contains(show, m[1]) || !strings.Contains(show, fmt.Sprintf("participant %d", id)) {
			t.Fatalf("show of share %d:\n%s", id, show)
		}
	}
	for _, c := range []struct {
		args []string
		code int
	}{
		{[]string{"-scheme", threshold.SchemeDKLS23, "-out", filepath.Join(dir, "keys")}, 1}, // exists
		{[]string{"-scheme", threshold.SchemeDKLS23, "-out", filepath.Join(dir, "k2"), "-t", "3"}, 1},
		{[]string{"-scheme", threshold.SchemeDKLS23, "-out", filepath.Join(dir, "k3"), "-from", "x"}, 2},
		{[]string{"-scheme", "rsa", "-out", filepath.Join(dir, "k4")}, 2},
	} {
		if code, _, _ := runIn(append([]string{"threshold", "split"}, c.args...)...); code != c.code {
			t.Errorf("split %v: exit %d, want %d", c.args, code, c.code)
		}
	}
}

// TestPartyImportState: `signerkit party -import-state` sets a party's
// double-sign state from the old signer's priv_validator_state.json, so
// that a validator moved mid-height keeps signing that height (where
// -init-height H+1 would refuse it) after the old signer's last vote; an
// older state is refused without a change, and -init-height then finds
// the state made.
func TestPartyImportState(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	thrSplitKey(t, dir, 12)
	cfg := thrPartyConfig(t, dir, 1, "127.0.0.1:0", `"coordinator-1"`)
	old := filepath.Join(dir, "priv_validator_state.json")
	write := func(h int) {
		if err := os.WriteFile(old, fmt.Appendf(nil, `{"height":"%d","round":0,"step":2}`, h), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(7)
	out := thrRunOK(t, "party", "-config", cfg, "-import-state", old)
	if !strings.Contains(out, "test-chain") {
		t.Fatalf("party -import-state printed:\n%s", out)
	}
	rep, err := guard.Inspect(guard.DirFS(filepath.Join(filepath.Dir(cfg), "state", "guard")), "test-chain")
	if err != nil || rep.Err != nil {
		t.Fatalf("the party's state: %v %v", err, rep)
	}
	// Without the prevote's sign bytes, what comes after it is the next
	// round (as `state import` does): still height 7, where -init-height 8
	// would refuse the rest of the height.
	if st := rep.State; st.Height != 7 || st.Round != 1 || st.Step != 0 {
		t.Fatalf("the party's state is %d/%d/%d, want 7/1/0: just after the prevote at 7/0", st.Height, st.Round, st.Step)
	}
	write(5)
	err = run([]string{"party", "-config", cfg, "-import-state", old}, io.Discard, io.Discard)
	if !errors.Is(err, signer.ErrDoubleSign) {
		t.Fatalf("importing an older state: %v, want a refusal as a double sign", err)
	}
	if out := thrRunOK(t, "party", "-config", cfg, "-init-height", "1"); !strings.Contains(out, "nothing written") {
		t.Fatalf("-init-height after -import-state:\n%s", out)
	}
	err = run([]string{"party", "-config", cfg, "-import-state", old, "-init-height", "3"}, io.Discard, io.Discard)
	if !errors.Is(err, errUsage) {
		t.Fatalf("-import-state with -init-height: %v, want a usage error", err)
	}
}
