package yubihsm_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/signer/signertest"
	"github.com/signerkit/signerkit/signer/signertrace"
	"github.com/signerkit/signerkit/yubihsm"
	"github.com/signerkit/signerkit/yubihsm/yubihsmsim"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// sim starts a simulated YubiHSM 2 behind an httptest connector.
func sim(t testing.TB, cfg yubihsmsim.Config) (*yubihsmsim.Device, string) {
	t.Helper()
	dev := yubihsmsim.New(cfg)
	srv := httptest.NewServer(dev.Handler())
	t.Cleanup(srv.Close)
	return dev, srv.URL
}

// config reaches the simulator's connector at url with the factory
// authentication key and its password, through the simulator's client,
// which reports its modeled time and passes deadlines on.
func config(url string) yubihsm.Config {
	return yubihsm.Config{Connector: url, Secret: signer.SecretBytes([]byte("password")), HTTPClient: yubihsmsim.HTTPClient()}
}

func openStore(t testing.TB, cfg yubihsm.Config) *yubihsm.Store {
	t.Helper()
	st, err := yubihsm.OpenStore(context.Background(), cfg)
	if err != nil {
		t.Fatalf("OpenStore: %v", err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func generate(t testing.TB, st *yubihsm.Store, alg signer.Algorithm, label string) signer.KeyInfo {
	t.Helper()
	ki, err := st.GenerateKey(context.Background(), alg, label)
	if err != nil {
		t.Fatalf("GenerateKey(%v): %v", alg, err)
	}
	return ki
}

// openSigner opens ref through st.OpenKey, which must return a
// *yubihsm.Signer, closed when t ends.
func openSigner(t testing.TB, st *yubihsm.Store, ref signer.KeyRef) *yubihsm.Signer {
	t.Helper()
	s, err := st.OpenKey(context.Background(), ref)
	if err != nil {
		t.Fatalf("OpenKey(%v): %v", ref, err)
	}
	k, ok := s.(*yubihsm.Signer)
	if !ok {
		t.Fatalf("OpenKey returned a %T, want a *yubihsm.Signer", s)
	}
	t.Cleanup(func() { k.Close() })
	return k
}

// countRetries returns a context whose trace counts retries.
func countRetries(ctx context.Context) (context.Context, *atomic.Int64) {
	var retries atomic.Int64
	return signertrace.WithTrace(ctx, &signertrace.Trace{Count: func(c signertrace.Counter, n int64) {
		if c == signertrace.CountRetries {
			retries.Add(n)
		}
	}}), &retries
}

// waitOpenSessions gives the sessions a pool drops in the background up to
// 5 s to be closed on dev, then fails t unless want are open; which says
// which those are.
func waitOpenSessions(t testing.TB, dev *yubihsmsim.Device, want int, which string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for dev.OpenSessions() > want && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := dev.OpenSessions(); n != want {
		t.Errorf("%d sessions open, want %d (%s): dropped sessions must be closed, not left to expire", n, want, which)
	}
}

// TestConformance runs the suite on each algorithm, and on keys that keep
// four sessions each: in parallel subtests, each on its own simulator.
func TestConformance(t *testing.T) {
	for _, tc := range []struct {
		name     string
		alg      signer.Algorithm
		sessions int
	}{
		{"ed25519", signer.Ed25519, 0},
		{"p256", signer.ECDSAP256, 0},
		{"p384", signer.ECDSAP384, 0},
		{"secp256k1", signer.ECDSASecp256k1, 0},
		{"rsa-pkcs1v15", signer.RSAPKCS1v15, 0},
		{"rsa-pss", signer.RSAPSS, 0},
		{"ed25519-sessions=4", signer.Ed25519, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dev, url := sim(t, yubihsmsim.Config{})
			cfg := config(url)
			cfg.Sessions = tc.sessions
			st := openStore(t, cfg)
			ki := generate(t, st, tc.alg, "conformance")
			opts := signertest.Options{Hang: dev.Hang, Timeout: 20 * time.Second}
			if tc.alg == signer.Ed25519 {
				opts.MaxMessage = yubihsm.MaxEd25519Message
			}
			signertest.Run(t, func() (signer.Signer, error) {
				return st.OpenKey(context.Background(), ki.Ref())
			}, opts)
		})
	}
}

func TestKeyStore(t *testing.T) {
	t.Parallel()
	_, url := sim(t, yubihsmsim.Config{})
	st := openStore(t, config(url))
	// A key generated or imported for RSAPSS signs PSS only (the device
	// enforces it), where the suite wants it to open for PKCS #1 v1.5
	// too: TestRSAPSSKeys checks those.
	algs := []signer.Algorithm{signer.Ed25519, signer.ECDSAP256, signer.ECDSAP384, signer.ECDSASecp256k1, signer.RSAPKCS1v15}
	signertest.RunKeyStore(t, st, signertest.KeyStoreOptions{
		Algorithms:    algs,
		SignerOptions: signertest.Options{MaxMessage: yubihsm.MaxEd25519Message, Timeout: 20 * time.Second},
	})
}

// TestRealDevice runs the suites against a real YubiHSM 2 when
// SIGNERKIT_YUBIHSM names its connector (and SIGNERKIT_YUBIHSM_PASSWORD the
// password of auth key 1, "password" by default).
func TestRealDevice(t *testing.T) {
	url := os.Getenv("SIGNERKIT_YUBIHSM")
	if url == "" {
		t.Skip("SIGNERKIT_YUBIHSM is not set")
	}
	cfg := config(url)
	if _, ok := os.LookupEnv("SIGNERKIT_YUBIHSM_PASSWORD"); ok {
		cfg.Secret = signer.SecretEnv("SIGNERKIT_YUBIHSM_PASSWORD")
	}
	st := openStore(t, cfg)
	opts := signertest.Options{MaxMessage: yubihsm.MaxEd25519Message, Concurrency: 2}
	signertest.RunKeyStore(t, st, signertest.KeyStoreOptions{SignerOptions: opts})
	for _, alg := range []signer.Algorithm{signer.Ed25519, signer.ECDSAP256, signer.ECDSAP384, signer.ECDSASecp256k1, signer.RSAPKCS1v15, signer.RSAPSS} {
		t.Run(alg.String(), func(t *testing.T) {
			ki := generate(t, st, alg, "signertest-conformance-"+alg.String())
			defer st.DeleteKey(context.Background(), ki.Ref())
			o := opts
			if alg != signer.Ed25519 {
				o.MaxMessage = 0
			}
			signertest.Run(t, func() (signer.Signer, error) { return st.OpenKey(context.Background(), ki.Ref()) }, o)
		})
	}
}

func TestWrongPassword(t *testing.T) {
	_, url := sim(t, yubihsmsim.Config{})
	cfg := config(url)
	cfg.Secret = signer.SecretBytes([]byte("wrong"))
	_, err := yubihsm.OpenStore(context.Background(), cfg)
	if !errors.Is(err, signer.ErrWrongPassphrase) {
		t.Fatalf("OpenStore with a wrong password: %v, want ErrWrongPassphrase", err)
	}
	cfg.Key = signer.KeyRef{Label: "any"}
	if _, err := yubihsm.Open(context.Background(), cfg); !errors.Is(err, signer.ErrWrongPassphrase) {
		t.Fatalf("Open with a wrong password: %v, want ErrWrongPassphrase", err)
	}
}
