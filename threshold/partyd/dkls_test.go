package partyd_test

import (
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/decred/dcrd/dcrec/secp256k1/v4"
	k1ecdsa "github.com/decred/dcrd/dcrec/secp256k1/v4/ecdsa"

	"github.com/signerkit/signerkit/internal/refsecp256k1"
	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/threshold"
	"github.com/signerkit/signerkit/threshold/dkls23"
	"github.com/signerkit/signerkit/threshold/partyd"
)

// TestDKLS23PartyMetrics: a DKLS23 party served by partyd signs for a
// coordinator holding share 1; each signature verifies under decred's
// secp256k1 and refsecp256k1. Its /metrics count what happened, scraped:
// the party holds at most 2 presignatures, so of the 3 the coordinator
// made up front the first was dropped, and the first sign met it as an
// unknown presignature (one nonce_used refusal) before it made another;
// then two more signs, each presigning first. Every metric is listed in
// docs/threshold.md; /healthz and /readyz answer 200.
func TestDKLS23PartyMetrics(t *testing.T) {
	d := &deployment{dir: t.TempDir()}
	shares, err := dkls23.Deal(2, 3, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := threshold.WriteCerts(d.dir, 3, 1, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := threshold.WriteDKLS23ShareFiles(d.dir, []*dkls23.Share{shares[0], shares[1]}); err != nil {
		t.Fatal(err)
	}
	setup, err := threshold.LoadDKLS23PartyFile(d.write(t, "dkls-party.toml", `scheme = "dkls23-secp256k1"
share = "share-2.pem"
listen = "127.0.0.1:0"
cert = "party-2.crt"
key = "party-2.key"
ca = "ca.crt"
coordinators = ["coordinator-1"]
max_presignatures = 2
metrics_addr = "127.0.0.1:0"
`))
	if err != nil {
		t.Fatal(err)
	}
	srv, err := partyd.NewDKLS23(setup, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	s, err := threshold.OpenDKLS23File(d.write(t, "dkls-coordinator.toml", fmt.Sprintf(`scheme = "dkls23-secp256k1"
share = "share-1.pem"
cert = "coordinator-1.crt"
key = "coordinator-1.key"
ca = "ca.crt"
pool_size = -1
[[party]]
id = 2
addr = %q
`, srv.Addr())))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	sctx, scancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer scancel()
	if n, err := s.Presign(sctx, 2, 3); n != 3 || err != nil {
		t.Fatalf("Presign: %d, %v", n, err)
	}
	for i := range 3 {
		msg := fmt.Appendf(nil, "account tx %d", i)
		sig, err := s.SignContext(sctx, msg)
		if err != nil {
			t.Fatalf("sign %d: %v", i, err)
		}
		verifySecp256k1(t, shares[0].PublicKey(), msg, sig)
	}
	base := "http://" + srv.MetricsAddr()
	code, body := get(t, base+"/metrics")
	if code != 200 {
		t.Fatalf("/metrics: %d\n%s", code, body)
	}
	want := map[string]float64{
		"signerkit_party_shares_total":                        3,
		`signerkit_party_refusals_total{reason="nonce_used"}`: 1,
		`signerkit_party_refusals_total{reason="other"}`:      0,
		"signerkit_party_presigned_total":                     6, // 3 up front, one after the refusal, two cold signs
		"signerkit_party_presignatures":                       1, // the third made up front, never used
		`signerkit_party_wire_bytes_total{direction="in"}`:    -1,
		`signerkit_party_wire_bytes_total{direction="out"}`:   -1,
	}
	for name, v := range want {
		m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(name) + ` (\S+)$`).FindStringSubmatch(body)
		if m == nil {
			t.Errorf("/metrics has no %s", name)
			continue
		}
		got, err := strconv.ParseFloat(m[1], 64)
		if err != nil || (v >= 0 && got != v) || (v < 0 && got <= 0) {
			t.Errorf("%s = %s, want %v (-1: above 0)", name, m[1], v)
		}
	}
	doc, err := os.ReadFile("../../docs/threshold.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range regexp.MustCompile(`(?m)^(signerkit_party_[a-z_]+)`).FindAllStringSubmatch(body, -1) {
		if !regexp.MustCompile("`" + n[1] + "`").Match(doc) {
			t.Errorf("docs/threshold.md does not list %s", n[1])
		}
	}
	for _, path := range []string{"/healthz", "/readyz"} {
		if code, body := get(t, base+path); code != 200 {
			t.Errorf("%s: %d %s", path, code, body)
		}
	}
	if srv.DKLS23Party() == nil || srv.Party() != nil {
		t.Error("a DKLS23 server's party accessors")
	}
}

// verifySecp256k1 checks a 64-byte r‖s over SHA-256(msg) under the
// compressed key pub with refsecp256k1 and, through its DER form, with
// decred's secp256k1.
func verifySecp256k1(t *testing.T, pub, msg, sig []byte) {
	t.Helper()
	h := sha256.Sum256(msg)
	if len(sig) != 64 || !refsecp256k1.VerifyLowS(pub, h[:], sig[:32], sig[32:]) {
		t.Fatal("refsecp256k1 refuses the signature")
	}
	der, err := signer.ECDSAToASN1(signer.ECDSASecp256k1, sig)
	if err != nil {
		t.Fatal(err)
	}
	parsed, err := k1ecdsa.ParseDERSignature(der)
	k, kerr := secp256k1.ParsePubKey(pub)
	if err != nil || kerr != nil || !parsed.Verify(h[:], k) {
		t.Fatalf("decred refuses the signature: %v %v", err, kerr)
	}
}
