package partyd_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/signerkit/signerkit/signbytes"
	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/threshold"
	"github.com/signerkit/signerkit/threshold/frost"
	"github.com/signerkit/signerkit/threshold/partyd"
)

// deployment is a 2-of-3 key's files in a directory: shares, certificates
// and the SPKI pins of the certificates, by name.
type deployment struct {
	dir  string
	pub  ed25519.PublicKey
	pins map[string]string
}

func newDeployment(t *testing.T) *deployment {
	t.Helper()
	d := &deployment{dir: t.TempDir(), pins: map[string]string{}}
	var priv ed25519.PrivateKey
	d.pub, priv, _ = ed25519.GenerateKey(rand.Reader)
	dealt, err := frost.SplitSeed(priv.Seed(), 2, 3, rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := threshold.WriteShareFiles(d.dir, dealt.Shares, dealt.Public); err != nil {
		t.Fatal(err)
	}
	_, issued, err := threshold.WriteCerts(d.dir, 3, 2, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range issued {
		d.pins[c.Name] = c.Pin
	}
	return d
}

func (d *deployment) write(t *testing.T, name, text string) string {
	t.Helper()
	p := filepath.Join(d.dir, name)
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// startParty runs party id, pinning coordinator-1 by key (no CA).
func (d *deployment) startParty(t *testing.T, id int) *partyd.Server {
	t.Helper()
	cfg := d.write(t, fmt.Sprintf("party-%d.toml", id), fmt.Sprintf(`share = "share-%d.pem"
listen = "127.0.0.1:0"
cert = "party-%d.crt"
key = "party-%d.key"
coordinators = [%q]
state_dir = "state-%d"
chains = ["c1"]
metrics_addr = "127.0.0.1:0"
`, id, id, id, d.pins["coordinator-1"], id))
	setup, err := threshold.LoadPartyFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { setup.Close() })
	if _, err := partyd.New(setup, nil); !errors.Is(err, signer.ErrInvalidArgument) || !strings.Contains(err.Error(), "-init-height") {
		t.Fatalf("a party without state: %v", err)
	}
	if done, err := setup.InitState(context.Background(), 1); err != nil || len(done) != 1 {
		t.Fatalf("InitState: %v %v", done, err)
	}
	s, err := partyd.New(setup, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	return s
}

func (d *deployment) coordinator(t *testing.T, addrs []string, pins []string) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("public = \"public.pem\"\ncert = \"coordinator-1.crt\"\nkey = \"coordinator-1.key\"\nparty_timeout = \"1s\"\n")
	for i, a := range addrs {
		if pins[i] == "file" { // pinned by its certificate file
			fmt.Fprintf(&b, "[[party]]\nid = %d\naddr = %q\ncert = \"party-%d.crt\"\n", i+1, a, i+1)
			continue
		}
		fmt.Fprintf(&b, "[[party]]\nid = %d\naddr = %q\npin = %q\n", i+1, a, pins[i])
	}
	return d.write(t, "coordinator.toml", b.String())
}

// prevote returns the sign bytes of a prevote on chain c1.
func prevote(t *testing.T, h int64, tag byte) []byte {
	t.Helper()
	b, err := signbytes.Message{Format: signbytes.CometBFT, Phase: signbytes.Prevote, Height: h, ChainID: "c1",
		BlockID: signbytes.BlockID{Hash: bytes.Repeat([]byte{tag}, 32), PartSetHeader: signbytes.PartSetHeader{Total: 1, Hash: make([]byte, 32)}}}.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestPinnedParties: parties and a coordinator that pin each other's keys
// (no CA; one party pinned by its certificate file) sign for the key, verified with crypto/ed25519; a coordinator
// whose pins are wrong gets nothing; the metrics count the shares and are
// all listed in docs/threshold.md; /readyz answers 200.
func TestPinnedParties(t *testing.T) {
	d := newDeployment(t)
	var servers []*partyd.Server
	var addrs, pins []string
	for id := 1; id <= 3; id++ {
		s := d.startParty(t, id)
		servers, addrs = append(servers, s), append(addrs, s.Addr())
		pins = append(pins, d.pins[fmt.Sprintf("party-%d", id)])
	}
	s, err := threshold.OpenFile(d.coordinator(t, addrs, []string{pins[0], pins[1], "file"}))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for i := range 5 {
		msg := prevote(t, int64(i+1), byte(i))
		sig, err := s.SignContext(ctx, msg)
		if err != nil || !ed25519.Verify(d.pub, msg, sig) {
			t.Fatalf("sign %d: %v", i, err)
		}
	}
	var shares uint64
	for _, srv := range servers {
		shares += srv.Party().ServeStats().Shares
	}
	if shares < 10 { // a hedge may ask a second pair
		t.Errorf("%d shares for 5 signatures of 2 of 3", shares)
	}
	code, body := get(t, "http://"+servers[0].MetricsAddr()+"/metrics")
	doc, err := os.ReadFile("../../docs/threshold.md")
	if err != nil {
		t.Fatal(err)
	}
	names := regexp.MustCompile(`(?m)^(signerkit_party_[a-z_]+)`).FindAllStringSubmatch(body, -1)
	if code != 200 || len(names) < 5 {
		t.Fatalf("/metrics: %d\n%s", code, body)
	}
	for _, n := range names {
		if !bytes.Contains(doc, []byte("`"+n[1]+"`")) {
			t.Errorf("docs/threshold.md does not list %s", n[1])
		}
	}
	if code, body := get(t, "http://"+servers[0].MetricsAddr()+"/readyz"); code != 200 {
		t.Errorf("/readyz: %d %s", code, body)
	}
	// Pins swapped: every party's certificate is refused.
	bad, err := threshold.OpenFile(d.coordinator(t, addrs, []string{pins[1], pins[2], pins[0]}))
	if err != nil {
		t.Fatal(err)
	}
	defer bad.Close()
	bctx, bcancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer bcancel()
	if _, err := bad.SignContext(bctx, prevote(t, 9, 9)); err == nil {
		t.Fatal("a coordinator with wrong pins signed")
	}
}

// TestConfigErrors: a config file that cannot be used is a
// *threshold.ConfigFileError naming the key at fault.
func TestConfigErrors(t *testing.T) {
	d := newDeployment(t)
	base := "public = \"public.pem\"\ncert = \"coordinator-1.crt\"\nkey = \"coordinator-1.key\"\nca = \"ca.crt\"\n"
	party := func(id int, extra string) string {
		return fmt.Sprintf("[[party]]\nid = %d\naddr = \"127.0.0.1:1\"\n%s", id, extra)
	}
	cases := []struct{ name, text, key string }{
		{"unknown key", base + "colour = 1\n" + party(1, "") + party(2, ""), "colour"},
		{"no public", "cert = \"x\"\n", "public"},
		{"too few", base + party(1, ""), "party"},
		{"not a participant", base + party(1, "") + party(9, ""), "party[1].id"},
		{"bad pin", base + party(1, "pin = \"sha256:12\"\n") + party(2, ""), "party[0].pin"},
		{"no ca, no pin", strings.Replace(base, "ca = \"ca.crt\"\n", "", 1) + party(1, "") + party(2, ""), "party[0].pin"},
		{"pin and cert", base + party(1, "pin = \"sha256:00\"\ncert = \"party-1.crt\"\n") + party(2, ""), "party[0].cert"},
		{"cert not a certificate", base + party(1, "cert = \"public.pem\"\n") + party(2, ""), "party[0].cert"},
		{"key of another cert", strings.Replace(base, "coordinator-1.key", "party-1.key", 1) + party(1, "") + party(2, ""), "cert"},
		{"local without nonce_dir", base + party(2, "") + "[local]\nshare = \"share-1.pem\"\n", "local.nonce_dir"},
		{"local share is a party too", base + party(1, "") + "[local]\nshare = \"share-1.pem\"\nnonce_dir = \"n\"\n", "party[0].id"},
	}
	for _, c := range cases {
		p := d.write(t, "bad.toml", c.text)
		_, err := threshold.LoadCoordinatorFile(p)
		var cfe *threshold.ConfigFileError
		if !errors.As(err, &cfe) || cfe.Key != c.key {
			t.Errorf("%s: %v, want an error at %s", c.name, err, c.key)
		}
		if err := threshold.CheckURI("threshold:config=" + p); err == nil {
			t.Errorf("%s: CheckURI passed", c.name)
		}
	}
	if err := threshold.CheckURI("threshold:file=x"); !errors.Is(err, signer.ErrInvalidArgument) {
		t.Errorf("a threshold: URI without config: %v", err)
	}
	// A coordinator with a local share and one remote party loads.
	ok := d.write(t, "ok.toml", base+party(2, "")+"[local]\nshare = \"share-1.pem\"\nnonce_dir = \"nonces\"\n")
	cfg, err := threshold.LoadCoordinatorFile(ok)
	if err != nil || cfg.Local == nil || len(cfg.Parties) != 1 {
		t.Fatalf("%+v %v", cfg, err)
	}
	cfg.Local.Nonces.Close()

	partyBase := "share = \"share-1.pem\"\nlisten = \"127.0.0.1:0\"\ncert = \"party-1.crt\"\nkey = \"party-1.key\"\nstate_dir = \"s\"\nchains = [\"c1\"]\n"
	for _, c := range []struct{ name, text, key string }{
		{"no coordinators", partyBase, "coordinators"},
		{"a name without ca", partyBase + "coordinators = [\"coordinator-1\"]\n", "coordinators[0]"},
		{"no chains", strings.Replace(partyBase, "chains = [\"c1\"]\n", "", 1) + "coordinators = [\"x\"]\nca = \"ca.crt\"\n", "chains"},
		{"share of nothing", strings.Replace(partyBase, "share-1.pem", "ca.crt", 1) + "coordinators = [\"x\"]\nca = \"ca.crt\"\n", "share"},
	} {
		_, err := threshold.LoadPartyFile(d.write(t, "party-bad.toml", c.text))
		var cfe *threshold.ConfigFileError
		if !errors.As(err, &cfe) || cfe.Key != c.key {
			t.Errorf("party %s: %v, want an error at %s", c.name, err, c.key)
		}
	}
}
