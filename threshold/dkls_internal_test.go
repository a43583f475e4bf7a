package threshold

import (
	"context"
	"crypto"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/decred/dcrd/dcrec/secp256k1/v4"
	k1ecdsa "github.com/decred/dcrd/dcrec/secp256k1/v4/ecdsa"

	"github.com/signerkit/signerkit/internal/refsecp256k1"
	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/threshold/dkls23"
)

var dklsShares = sync.OnceValues(func() ([]*dkls23.Share, error) { return dkls23.Deal(2, 3, nil) })

// dklsFixture is a DKLS23 key's parties 2 and 3 serving on loopback, and
// what a coordinator holding share 1 needs to reach them.
type dklsFixture struct {
	shares  []*dkls23.Share
	dir     string
	coord   *tls.Config
	parties map[int]*DKLS23Party
	addrs   map[int]string
	pool    *x509.CertPool
	// tamper, set before start, rewrites a party's answers.
	tamper map[int]func(req, resp frame) frame
	max    int // the parties' MaxPresignatures
	// timeout is the signers' PartyTimeout; 0 means 2 s. hedge is their
	// HedgeAfter.
	timeout, hedge time.Duration
	// wrap, set before start, wraps a party's listener.
	wrap map[int]func(net.Listener) net.Listener
}

func loadPair(t testing.TB, dir, name string) tls.Certificate {
	c, err := tls.LoadX509KeyPair(filepath.Join(dir, name+".crt"), filepath.Join(dir, name+".key"))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func newDKLSFixture(t testing.TB) *dklsFixture {
	f := dklsSetup(t)
	for _, id := range []int{2, 3} {
		f.start(t, id)
	}
	return f
}

// dklsSetup makes the key and the certificates; start starts a party.
func dklsSetup(t testing.TB) *dklsFixture {
	t.Helper()
	shares, err := dklsShares()
	if err != nil {
		t.Fatal(err)
	}
	f := &dklsFixture{shares: shares, dir: t.TempDir(), parties: map[int]*DKLS23Party{}, addrs: map[int]string{},
		tamper: map[int]func(req, resp frame) frame{}}
	if _, _, err := WriteCerts(f.dir, 3, 1, 0); err != nil {
		t.Fatal(err)
	}
	pem, err := os.ReadFile(filepath.Join(f.dir, "ca.crt"))
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)
	f.coord = &tls.Config{Certificates: []tls.Certificate{loadPair(t, f.dir, "coordinator-1")}, RootCAs: pool}
	f.pool = pool
	return f
}

func (f *dklsFixture) start(t testing.TB, id int) {
	p, err := NewDKLS23Party(DKLS23PartyConfig{Share: f.shares[id-1], Coordinators: []string{"coordinator-1"}, MaxPresignatures: f.max,
		TLS: &tls.Config{Certificates: []tls.Certificate{loadPair(t, f.dir, fmt.Sprintf("party-%d", id))}, ClientCAs: f.pool}})
	if err != nil {
		t.Fatal(err)
	}
	if fn := f.tamper[id]; fn != nil {
		p.srv.handler = func(req frame, owner coordinatorID) frame { return fn(req, p.handle(req, owner)) }
	}
	addr := f.addrs[id]
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	if w := f.wrap[id]; w != nil {
		l = w(l)
	}
	go p.Serve(l)
	t.Cleanup(func() { p.Close() })
	f.parties[id], f.addrs[id] = p, l.Addr().String()
}

func (f *dklsFixture) signer(t testing.TB, pool int, ids ...int) *DKLS23Signer {
	t.Helper()
	if len(ids) == 0 {
		ids = []int{2, 3}
	}
	var rs []Remote
	for _, id := range ids {
		rs = append(rs, Remote{ID: fmtID(id), Addr: f.addrs[id], ServerName: fmt.Sprintf("party-%d", id)})
	}
	cfg := DKLS23Config{Local: f.shares[0], Parties: rs, TLS: f.coord, PoolSize: pool, PartyTimeout: 2 * time.Second,
		HedgeAfter: f.hedge, Log: testLog(t)}
	if f.timeout > 0 {
		cfg.PartyTimeout = f.timeout
	}
	if _, bench := t.(*testing.B); bench {
		cfg.Log = nil
	}
	s, err := NewDKLS23Signer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// checkSecp256k1 verifies a 64-byte r‖s over SHA-256(msg) under pub with
// decred's secp256k1 and with internal/refsecp256k1, which share no code.
func checkSecp256k1(t testing.TB, pub, msg, sig []byte) {
	t.Helper()
	if len(sig) != 64 {
		t.Fatalf("a %d-byte signature", len(sig))
	}
	h := sha256.Sum256(msg)
	var r, s secp256k1.ModNScalar
	r.SetByteSlice(sig[:32])
	s.SetByteSlice(sig[32:])
	k, err := secp256k1.ParsePubKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	if s.IsOverHalfOrder() || !k1ecdsa.NewSignature(&r, &s).Verify(h[:], k) {
		t.Fatal("decred refuses the signature (or its S is high)")
	}
	if !refsecp256k1.VerifyLowS(pub, h[:], sig[:32], sig[32:]) {
		t.Fatal("refsecp256k1 refuses the signature")
	}
}

func waitPooled(t testing.TB, s *DKLS23Signer, id, n int) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for s.Pooled()[id] < n {
		if time.Now().After(deadline) {
			t.Fatalf("party %d's pool: %d presignatures after 20 s, want %d", id, s.Pooled()[id], n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestDKLS23SignsOverTLS signs with hedging off, so that each signature
// is one party's share (TestDKLS23HedgesAHangingParty has them on).
func TestDKLS23SignsOverTLS(t *testing.T) {
	f := newDKLSFixture(t)
	f.hedge = -1
	for _, pool := range []int{4, -1} {
		s := f.signer(t, pool)
		if pool > 0 {
			waitPooled(t, s, 2, 1)
		}
		for i := range 6 {
			msg := fmt.Appendf(nil, "gno sign bytes %d pool %d", i, pool)
			sig, err := s.SignContext(context.Background(), msg)
			if err != nil {
				t.Fatal(err)
			}
			checkSecp256k1(t, f.shares[0].PublicKey(), msg, sig)
			if err := signer.ECDSASecp256k1.Verify(s.Public(), msg, sig); err != nil {
				t.Fatal(err)
			}
		}
	}
	// crypto.Signer's Sign: a SHA-256 digest in, ASN.1 DER out.
	s := f.signer(t, -1)
	msg := []byte("through crypto.Signer")
	h := sha256.Sum256(msg)
	der, err := s.Sign(nil, h[:], crypto.SHA256)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := signer.ECDSAToRaw(signer.ECDSASecp256k1, der)
	if err != nil {
		t.Fatal(err)
	}
	checkSecp256k1(t, f.shares[0].PublicKey(), msg, raw)
	if _, err := s.Sign(nil, h[:], crypto.SHA512); err == nil {
		t.Fatal("Sign took a SHA-512 option for a SHA-256 digest")
	}
	if n := f.parties[2].Signed() + f.parties[3].Signed(); n != 13 {
		t.Fatalf("the parties signed %d shares for 13 signatures", n)
	}
}

func TestDKLS23FailoverAndAllDown(t *testing.T) {
	f := newDKLSFixture(t)
	s := f.signer(t, 2)
	waitPooled(t, s, 2, 2)
	f.parties[2].Close()
	for i := range 4 {
		msg := fmt.Appendf(nil, "after party 2 died %d", i)
		sig, err := s.SignContext(context.Background(), msg)
		if err != nil {
			t.Fatal(err)
		}
		checkSecp256k1(t, f.shares[0].PublicKey(), msg, sig)
	}
	if f.parties[3].Signed() != 4 {
		t.Fatalf("party 3 signed %d, want 4", f.parties[3].Signed())
	}
	f.parties[3].Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	start := time.Now()
	_, err := s.SignContext(ctx, []byte("both down"))
	var ne *NoSignerError
	if !errorsAs(err, &ne) || !errorsIs(err, signer.ErrDeviceNotFound) || len(ne.Errs) != 2 {
		t.Fatalf("both parties down: %v, want a *NoSignerError naming both", err)
	}
	// A hang guard, wide for a loaded machine: the typed error above is
	// the assertion.
	if d := time.Since(start); d > 2500*time.Millisecond {
		t.Fatalf("the failed sign took %v, far past its 1 s deadline", d)
	}
}
