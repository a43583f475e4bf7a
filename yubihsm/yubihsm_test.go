package yubihsm_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/signer/signertest"
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

func config(url string) yubihsm.Config {
	return yubihsm.Config{URL: url, Password: []byte("password")}
}

func open(t testing.TB, cfg yubihsm.Config) *yubihsm.Client {
	t.Helper()
	c, err := yubihsm.Open(context.Background(), cfg)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func generate(t testing.TB, c *yubihsm.Client, alg signer.Algorithm, label string) signer.KeyInfo {
	t.Helper()
	ki, err := c.GenerateKey(context.Background(), alg, label)
	if err != nil {
		t.Fatalf("GenerateKey(%v): %v", alg, err)
	}
	return ki
}

// TestConformance runs the suite on each algorithm, and on keys that keep
// four sessions each.
func TestConformance(t *testing.T) {
	for _, tc := range []struct {
		name     string
		alg      signer.Algorithm
		sessions int
	}{
		{"ed25519", signer.Ed25519, 0},
		{"p256", signer.ECDSAP256, 0},
		{"ed25519-sessions=4", signer.Ed25519, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dev, url := sim(t, yubihsmsim.Config{})
			cfg := config(url)
			cfg.Sessions = tc.sessions
			c := open(t, cfg)
			ki := generate(t, c, tc.alg, "conformance")
			opts := signertest.Options{Hang: dev.Hang, Timeout: 20 * time.Second}
			if tc.alg == signer.Ed25519 {
				opts.MaxMessage = yubihsm.MaxEd25519Message
			}
			signertest.Run(t, func() (signer.Signer, error) {
				return c.OpenKey(context.Background(), ki.Ref())
			}, opts)
		})
	}
}

func TestKeyStore(t *testing.T) {
	_, url := sim(t, yubihsmsim.Config{})
	c := open(t, config(url))
	signertest.RunKeyStore(t, c, signertest.KeyStoreOptions{
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
	if pw := os.Getenv("SIGNERKIT_YUBIHSM_PASSWORD"); pw != "" {
		cfg.Password = []byte(pw)
	}
	c := open(t, cfg)
	opts := signertest.Options{MaxMessage: yubihsm.MaxEd25519Message, Concurrency: 2}
	signertest.RunKeyStore(t, c, signertest.KeyStoreOptions{SignerOptions: opts})
	for _, alg := range []signer.Algorithm{signer.Ed25519, signer.ECDSAP256} {
		t.Run(alg.String(), func(t *testing.T) {
			ki := generate(t, c, alg, "signertest-conformance-"+alg.String())
			defer c.DeleteKey(context.Background(), ki.Ref())
			o := opts
			if alg != signer.Ed25519 {
				o.MaxMessage = 0
			}
			signertest.Run(t, func() (signer.Signer, error) { return c.OpenKey(context.Background(), ki.Ref()) }, o)
		})
	}
}

func TestWrongPassword(t *testing.T) {
	_, url := sim(t, yubihsmsim.Config{})
	cfg := config(url)
	cfg.Password = []byte("wrong")
	_, err := yubihsm.Open(context.Background(), cfg)
	if !errors.Is(err, signer.ErrWrongPassphrase) {
		t.Fatalf("Open with a wrong password: %v, want ErrWrongPassphrase", err)
	}
}
