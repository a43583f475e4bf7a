package yubihsm_test

// Tests of issue 19's hardening: the modeled-time header is honoured only
// from a simulator, bounded; deadlines on every path; degenerate public
// keys refused; Public returns copies; ImportKey checks its key first.

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/signerkit/signerkit/internal/eckey"
	"github.com/signerkit/signerkit/internal/simtime"
	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/signer/signertest"
	"github.com/signerkit/signerkit/signer/signertrace"
	"github.com/signerkit/signerkit/yubihsm"
	"github.com/signerkit/signerkit/yubihsm/yubihsmsim"
)

// forging passes requests to the simulator and puts a header value of its
// own in every response's X-Signerkit-Modeled, as a relay at the
// connector URL can; with status set, it answers that instead.
type forging struct {
	dev    http.Handler
	mu     sync.Mutex
	value  string
	status int
}

func (f *forging) set(value string, status int) {
	f.mu.Lock()
	f.value, f.status = value, status
	f.mu.Unlock()
}

func (f *forging) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	value, status := f.value, f.status
	f.mu.Unlock()
	if value == "" {
		f.dev.ServeHTTP(w, r)
		return
	}
	if status != 0 && r.URL.Path == "/connector/api" {
		w.Header().Set(simtime.Header, value)
		w.WriteHeader(status)
		return
	}
	f.dev.ServeHTTP(&forgedWriter{ResponseWriter: w, value: value}, r)
}

type forgedWriter struct {
	http.ResponseWriter
	value string
	wrote bool
}

func (w *forgedWriter) WriteHeader(code int) {
	if !w.wrote {
		w.wrote = true
		w.Header().Set(simtime.Header, w.value)
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *forgedWriter) Write(b []byte) (int, error) {
	if !w.wrote {
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseWriter.Write(b)
}

// forgingConnector serves a simulator behind a forging relay.
func forgingConnector(t *testing.T) (*forging, string) {
	t.Helper()
	f := &forging{dev: yubihsmsim.New(yubihsmsim.Config{Time: yubihsmsim.Accounted}).Handler()}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return f, srv.URL
}

// deviceReports signs msg with k under a trace and returns the device
// stages reported, and the sign's error.
func deviceReports(t *testing.T, k *yubihsm.Signer) ([]signertrace.StageInfo, signertrace.Summary, error) {
	t.Helper()
	var mu sync.Mutex
	var stages []signertrace.StageInfo
	col := signertrace.NewCollector()
	ctx := col.WithContext(context.Background())
	ctx = signertrace.WithTrace(ctx, &signertrace.Trace{StageDone: func(i signertrace.StageInfo) {
		if i.Source == signertrace.Modeled {
			mu.Lock()
			stages = append(stages, i)
			mu.Unlock()
		}
	}})
	err := signVerified(t, ctx, k, make([]byte, 108))
	return stages, col.Summary(), err
}

// TestModeledHeaderNeedsSimulator: a relay at the connector URL forges a
// 3-hour device stage; the package's own client reports nothing of it.
// The simulator's HTTPClient still refuses a stage beyond the limits, and
// a header on an error response.
func TestModeledHeaderNeedsSimulator(t *testing.T) {
	f, url := forgingConnector(t)
	threeHours := "device=" + strconv.FormatInt(int64(3*time.Hour), 10) + ";profile=forged"
	overflow := "device=9223372036854775807, device=9223372036854775807"

	plain := config(url)
	plain.HTTPClient = nil
	st := openStore(t, plain)
	k := openSigner(t, st, generate(t, st, signer.Ed25519, "plain").Ref())
	for _, forged := range []string{threeHours, overflow, "device=1000000;profile=forged"} {
		f.set(forged, 0)
		stages, sum, err := deviceReports(t, k)
		if err != nil {
			t.Fatalf("sign through the relay: %v", err)
		}
		if len(stages) != 0 || sum.Modeled() != 0 {
			t.Errorf("a default client reported the relay's %q: %+v (modeled %v)", forged, stages, sum.Modeled())
		}
		if sum.EndToEnd(0) < 0 || sum.Modeled() < 0 {
			t.Errorf("negative totals: %v", sum)
		}
	}

	f.set("", 0)
	sim := openStore(t, config(url))
	ks := openSigner(t, sim, generate(t, sim, signer.Ed25519, "sim").Ref())
	stages, _, err := deviceReports(t, ks)
	if err != nil || len(stages) != 1 || stages[0].Stage != signertrace.StageDevice {
		t.Fatalf("the simulator's own header: stages %+v, err %v; want its device stage", stages, err)
	}
	for _, forged := range []string{threeHours, overflow} {
		f.set(forged, 0)
		stages, sum, err := deviceReports(t, ks)
		if err != nil {
			t.Fatalf("sign: %v", err)
		}
		if len(stages) != 0 || sum.Modeled() < 0 {
			t.Errorf("a simulator client took %q beyond the limits: %+v", forged, stages)
		}
	}
	// An error response's header is not honoured either.
	f.set("device=1000000;profile=forged", http.StatusInternalServerError)
	stages, _, err = deviceReports(t, ks)
	if !errors.Is(err, signer.ErrDisconnected) {
		t.Errorf("sign answered HTTP 500: %v, want ErrDisconnected", err)
	}
	if len(stages) != 0 {
		t.Errorf("the header of an HTTP 500 was reported: %+v", stages)
	}
}

// TestModeledHeaderHuge: a 9 MiB header is refused by the package's own
// client (which reads 16 KiB of headers at most) and ignored whole, with
// no trace callback per entry, through a client with a larger limit.
func TestModeledHeaderHuge(t *testing.T) {
	f, url := forgingConnector(t)
	own := config(url)
	own.HTTPClient = nil
	st := openStore(t, own)
	k := openSigner(t, st, generate(t, st, signer.Ed25519, "huge").Ref())
	huge := strings.Repeat("device=1000000,", 9<<20/15)
	f.set(huge, 0)
	var calls atomic.Int64
	ctx := signertrace.WithTrace(context.Background(), &signertrace.Trace{StageDone: func(signertrace.StageInfo) { calls.Add(1) }})
	if _, err := k.SignContext(ctx, []byte("huge")); !errors.Is(err, signer.ErrDisconnected) {
		t.Errorf("own client, %d-byte header: %v, want ErrDisconnected", len(huge), err)
	}
	if n := calls.Load(); n > 4 {
		t.Errorf("own client: %d trace callbacks", n)
	}

	f.set("", 0)
	cfg := config(url)
	cfg.HTTPClient = &http.Client{Transport: yubihsmsim.NewTransport(&http.Transport{MaxResponseHeaderBytes: 32 << 20})}
	t.Cleanup(cfg.HTTPClient.CloseIdleConnections)
	st2 := openStore(t, cfg)
	k2 := openSigner(t, st2, generate(t, st2, signer.Ed25519, "huge2").Ref())
	if err := signVerified(t, context.Background(), k2, []byte("warm")); err != nil {
		t.Fatal(err)
	}
	mib := huge[:1<<20] // enough to show it is ignored whole, and quick under -race
	f.set(mib, 0)
	calls.Store(0)
	if err := signVerified(t, ctx, k2, []byte("huge")); err != nil {
		t.Fatalf("custom client: %v", err)
	}
	if n := calls.Load(); n > 4 {
		t.Errorf("custom client, %d-byte header: %d trace callbacks, want the header ignored whole", len(mib), n)
	}
}

// hung opens a key, signs once (so a session is open), and hangs the
// device until the test ends.
func hung(t *testing.T, cfg func(*yubihsm.Config)) *yubihsm.Signer {
	t.Helper()
	dev, url := sim(t, yubihsmsim.Config{Time: yubihsmsim.Accounted})
	k := openKey(t, url, cfg)
	if err := signVerified(t, context.Background(), k, []byte("warm up")); err != nil {
		t.Fatal(err)
	}
	release := dev.Hang()
	t.Cleanup(release)
	return k
}

// returnsWithin runs f and fails t unless it returns within limit (a
// generous bound: the point is that it returns at all).
func returnsWithin(t *testing.T, limit time.Duration, f func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		return err
	case <-time.After(limit):
		t.Fatalf("still blocked after %v", limit)
		return nil
	}
}

// TestRequestTimeoutCustomClient: RequestTimeout bounds a request carried
// by a caller's HTTPClient that has no timeout of its own.
func TestRequestTimeoutCustomClient(t *testing.T) {
	t.Parallel()
	hc := &http.Client{Transport: &http.Transport{}}
	t.Cleanup(hc.CloseIdleConnections)
	// Every request of the setup (a session, a key, a sign) must be
	// answered within RequestTimeout, on a machine that -race and
	// parallel tests may load: 2 s, which the hung sign then waits out,
	// well within returnsWithin's 10 s.
	k := hung(t, func(c *yubihsm.Config) {
		c.HTTPClient = hc
		c.RequestTimeout = 2 * time.Second
	})
	err := returnsWithin(t, 10*time.Second, func() error {
		_, err := k.SignContext(context.Background(), []byte("hung"))
		return err
	})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("sign on a hung device: %v, want context.DeadlineExceeded", err)
	}
}

// TestSignTimeout: Sign, which has no context, gives up after
// Config.SignTimeout on a hung device.
func TestSignTimeout(t *testing.T) {
	for _, alg := range []signer.Algorithm{signer.Ed25519, signer.ECDSAP256} {
		t.Run(alg.String(), func(t *testing.T) {
			// No modeled latency: the first Sign, which opens a session,
			// must not time out in modeled time (accounted time counts
			// against the 200 ms; this test is about a hung device).
			dev, url := sim(t, yubihsmsim.Config{Time: yubihsmsim.Accounted, Profile: &yubihsmsim.NoLatency})
			cfg := config(url)
			cfg.SignTimeout = 200 * time.Millisecond
			cfg.RequestTimeout = time.Hour
			st := openStore(t, cfg)
			k := openSigner(t, st, generate(t, st, alg, "sign-timeout").Ref())
			msg := []byte("crypto.Signer")
			digest, opts := msg, crypto.SignerOpts(crypto.Hash(0))
			if alg == signer.ECDSAP256 {
				d := sha256.Sum256(msg)
				digest, opts = d[:], crypto.SHA256
			}
			// Open the session first, so that the Sign below is one
			// round trip within its 200 ms. A loaded CI machine (-race,
			// parallel tests) can still stall that round trip past
			// 200 ms, so Sign gets a few tries to succeed; a try may fail
			// only by its SignTimeout.
			if _, err := k.SignContext(context.Background(), msg); err != nil {
				t.Fatal(err)
			}
			var sig []byte
			var err error
			for try := 1; ; try++ {
				if sig, err = k.Sign(nil, digest, opts); err == nil {
					break
				}
				if !errors.Is(err, context.DeadlineExceeded) || try == 10 {
					t.Fatalf("Sign, try %d: %v", try, err)
				}
				t.Logf("Sign, try %d: %v", try, err)
				// The timed-out try dropped its session: open another.
				if _, err := k.SignContext(context.Background(), msg); err != nil {
					t.Fatal(err)
				}
			}
			if alg == signer.Ed25519 {
				if !ed25519.Verify(k.Public().(ed25519.PublicKey), msg, sig) {
					t.Error("signature does not verify")
				}
			} else if !ecdsa.VerifyASN1(k.Public().(*ecdsa.PublicKey), digest, sig) {
				t.Error("signature does not verify")
			}
			release := dev.Hang()
			t.Cleanup(release)
			err = returnsWithin(t, 10*time.Second, func() error {
				_, err := k.Sign(nil, digest, opts)
				return err
			})
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("Sign on a hung device: %v, want context.DeadlineExceeded", err)
			}
		})
	}
}

// TestSmallOrderKey: a device presenting the identity point as an Ed25519
// key's public key is refused wherever the key is read.
func TestSmallOrderKey(t *testing.T) {
	dev, url := sim(t, yubihsmsim.Config{Time: yubihsmsim.Accounted})
	st := openStore(t, config(url))
	ki := generate(t, st, signer.Ed25519, "degenerate")
	id, _ := yubihsm.ParseID(ki.ID)
	ctx := context.Background()
	dev.Inject(yubihsmsim.FaultSmallOrderKey, 0)
	if _, err := st.PublicKey(ctx, id); !errors.Is(err, signer.ErrInvalidKey) {
		t.Errorf("PublicKey: %v, want ErrInvalidKey", err)
	}
	if _, err := st.ListKeys(ctx); !errors.Is(err, signer.ErrInvalidKey) {
		t.Errorf("ListKeys: %v, want ErrInvalidKey", err)
	}
	if _, err := st.OpenKey(ctx, ki.Ref()); !errors.Is(err, signer.ErrInvalidKey) {
		t.Errorf("OpenKey: %v, want ErrInvalidKey", err)
	}
	cfg := config(url)
	cfg.Key = ki.Ref()
	if k, err := yubihsm.Open(ctx, cfg); !errors.Is(err, signer.ErrInvalidKey) {
		t.Errorf("Open: %v, want ErrInvalidKey", err)
		if k != nil {
			k.Close()
		}
	}
	dev.Clear(yubihsmsim.FaultSmallOrderKey)
	k := openSigner(t, st, ki.Ref())
	if err := signVerified(t, ctx, k, []byte("a real key")); err != nil {
		t.Fatal(err)
	}
}

// TestPublicIsACopy: modifying what Public returns changes nothing for
// the Signer or later callers.
func TestPublicIsACopy(t *testing.T) {
	_, url := sim(t, yubihsmsim.Config{Time: yubihsmsim.Accounted})
	st := openStore(t, config(url))
	for _, alg := range []signer.Algorithm{signer.Ed25519, signer.ECDSAP256} {
		ki := generate(t, st, alg, "copy-"+alg.String())
		k := openSigner(t, st, ki.Ref())
		switch p := k.Public().(type) {
		case ed25519.PublicKey:
			for i := range p {
				p[i] = 0
			}
		case *ecdsa.PublicKey:
			x, y := eckey.Coordinates(p)
			x.SetInt64(1)
			y.SetInt64(2)
			p.Curve = elliptic.P384()
		}
		pub := k.Public()
		if !pub.(interface{ Equal(crypto.PublicKey) bool }).Equal(ki.Public) {
			t.Errorf("%v: Public changed after its result was modified", alg)
		}
		msg := []byte("copy")
		sig, err := k.SignContext(context.Background(), msg)
		if err != nil {
			t.Fatal(err)
		}
		if err := signertest.VerifyStd(alg, pub, msg, sig); err != nil {
			t.Errorf("%v: %v", alg, err)
		}
	}
}

// TestImportKeyChecks: ImportKey refuses, before anything reaches the
// device and without panicking, an ECDSA key with no curve and keys whose
// public half is not their private key's.
func TestImportKeyChecks(t *testing.T) {
	_, url := sim(t, yubihsmsim.Config{Time: yubihsmsim.Accounted})
	st := openStore(t, config(url))
	ctx := context.Background()
	a, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	b, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	_, ea, _ := ed25519.GenerateKey(rand.Reader)
	_, eb, _ := ed25519.GenerateKey(rand.Reader)
	mixedEd := append(append(ed25519.PrivateKey(nil), ea.Seed()...), eb.Public().(ed25519.PublicKey)...)
	cases := map[string]crypto.PrivateKey{
		"ecdsa without curve":           eckey.NewPrivate(&ecdsa.PublicKey{}, big.NewInt(5)),
		"ecdsa, another's public key":   eckey.NewPrivate(&b.PublicKey, eckey.Scalar(a)),
		"ecdsa, no public point":        eckey.NewPrivate(&ecdsa.PublicKey{Curve: elliptic.P256()}, eckey.Scalar(a)),
		"ed25519, another's public key": mixedEd,
	}
	for name, priv := range cases {
		var err error
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("%s: ImportKey panicked: %v", name, r)
				}
			}()
			_, err = st.ImportKey(ctx, priv, 0, "bad")
		}()
		if !errors.Is(err, signer.ErrInvalidKey) {
			t.Errorf("%s: ImportKey: %v, want ErrInvalidKey", name, err)
		}
	}
	if keys, err := st.FindKeys(ctx, signer.KeyRef{Label: "bad"}); err != nil || len(keys) != 0 {
		t.Errorf("after refused imports the device holds %d keys labelled bad (%v)", len(keys), err)
	}
	for _, priv := range []crypto.PrivateKey{a, ea} {
		ki, err := st.ImportKey(ctx, priv, 0, "good")
		if err != nil {
			t.Fatalf("ImportKey of a sound key: %v", err)
		}
		k := openSigner(t, st, ki.Ref())
		if err := signVerified(t, ctx, k, []byte("imported")); err != nil {
			t.Fatal(err)
		}
		if err := st.DeleteKey(ctx, ki.Ref()); err != nil {
			t.Fatal(err)
		}
	}
}
