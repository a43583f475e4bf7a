//go:build cgo

package pkcs11_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	p11 "github.com/miekg/pkcs11"

	"github.com/signerkit/signerkit/pkcs11"
	"github.com/signerkit/signerkit/pkcs11/pkcs11test"
	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/signer/signertest"
	"github.com/signerkit/signerkit/signer/signertrace"
)

// otherHandle is a second miekg/pkcs11 handle on the module the package
// has loaded, as another library in the same process would have: the
// module is initialized already, so it is neither initialized nor
// finalized here.
func otherHandle(t *testing.T, st *pkcs11test.Token) *p11.Ctx {
	t.Helper()
	c := p11.New(st.Module)
	if c == nil {
		t.Fatal("loading the module a second time failed")
	}
	if err := c.Initialize(); err == nil || !errors.Is(err, p11.Error(p11.CKR_CRYPTOKI_ALREADY_INITIALIZED)) {
		t.Fatalf("second handle's C_Initialize: %v, want CKR_CRYPTOKI_ALREADY_INITIALIZED", err)
	}
	t.Cleanup(c.Destroy)
	return c
}

// fillPool makes the pool hold DefaultPoolSize idle sessions: it signs from
// that many goroutines while the token hangs, so that each takes a session
// of its own, then lets them finish.
func fillPool(t *testing.T, tok *pkcs11.Store, k signer.Signer) {
	t.Helper()
	release := tok.Hang()
	var wg sync.WaitGroup
	for range pkcs11.DefaultPoolSize {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := k.SignContext(context.Background(), []byte("fill")); err != nil {
				t.Error(err)
			}
		}()
	}
	deadline := time.Now().Add(10 * time.Second)
	for tok.BusySessions() < pkcs11.DefaultPoolSize && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	release()
	wg.Wait()
	if n := len(tok.IdleSessions()); n != pkcs11.DefaultPoolSize {
		t.Fatalf("%d idle sessions after filling the pool, want %d", n, pkcs11.DefaultPoolSize)
	}
}

// countPIN makes the Config's Secret count its calls.
func countPIN(calls *atomic.Int32) func(*pkcs11.Config) {
	return func(c *pkcs11.Config) {
		pin := c.Secret
		c.Secret = func() ([]byte, error) {
			calls.Add(1)
			return pin()
		}
	}
}

func TestRecoverClosedSessions(t *testing.T) {
	for _, alg := range []signer.Algorithm{signer.Ed25519, signer.ECDSAP256, signer.RSAPSS} {
		t.Run(alg.String(), func(t *testing.T) {
			var pins atomic.Int32
			st, tok := openToken(t, pkcs11.WithFaults, countPIN(&pins))
			k := makeKey(t, tok, alg, "recover")
			fillPool(t, tok, k)
			other := otherHandle(t, st)

			for round := range 3 {
				// Every session of the application goes, and the login with them.
				if err := other.CloseAllSessions(tok.SlotID()); err != nil {
					t.Fatalf("C_CloseAllSessions: %v", err)
				}
				before := pins.Load()
				col := signertrace.NewCollector()
				msg := []byte("after the sessions were closed")
				sig, err := k.SignContext(col.WithContext(context.Background()), msg)
				if err != nil {
					t.Fatalf("round %d: sign after C_CloseAllSessions: %v", round, err)
				}
				if err := signertest.VerifyStd(alg, k.Public(), msg, sig); err != nil {
					t.Fatal(err)
				}
				sum := col.Summary()
				if got := sum.Count(signertrace.CountRetries); got != 1 {
					t.Errorf("round %d: %d retries reported, want 1", round, got)
				}
				if got := pins.Load() - before; got != 1 {
					t.Errorf("round %d: PIN asked %d times, want 1 (one login on the new session)", round, got)
				}
				if sum.Stage(signertrace.StageSession).Measured <= 0 || sum.Stage(signertrace.StageDevice).Measured <= 0 {
					t.Errorf("round %d: stages %v, want session and device", round, sum)
				}
				fillPool(t, tok, k)
				// The pool keeps live sessions only, no more than its size.
				idle := tok.IdleSessions()
				for _, sh := range idle {
					if _, err := other.GetSessionInfo(p11.SessionHandle(sh)); err != nil {
						t.Errorf("round %d: idle session %d: %v", round, sh, err)
					}
				}
			}
		})
	}
}

func TestReloginAfterLogout(t *testing.T) {
	var pins atomic.Int32
	st, tok := openToken(t, pkcs11.WithFaults, countPIN(&pins))
	k := generateKey(t, tok, signer.Ed25519, "relogin")
	fillPool(t, tok, k)
	other := otherHandle(t, st)
	sh, err := other.OpenSession(tok.SlotID(), p11.CKF_SERIAL_SESSION)
	if err != nil {
		t.Fatal(err)
	}
	defer other.CloseSession(sh)
	for round := range 2 {
		// The sessions stay open; the login they share goes.
		if err := other.Logout(sh); err != nil {
			t.Fatalf("C_Logout: %v", err)
		}
		before := pins.Load()
		msg := []byte("after a logout")
		sig, err := k.SignContext(context.Background(), msg)
		if err != nil {
			t.Fatalf("round %d: sign after C_Logout: %v", round, err)
		}
		if err := signertest.VerifyStd(signer.Ed25519, k.Public(), msg, sig); err != nil {
			t.Fatal(err)
		}
		if got := pins.Load() - before; got != 1 {
			t.Errorf("round %d: PIN asked %d times, want 1", round, got)
		}
	}
	// An operation on a handle the module still knows meets
	// CKR_USER_NOT_LOGGED_IN instead (SoftHSM2 refuses to make a private
	// key in a public session): the pool logs in and retries.
	if err := other.Logout(sh); err != nil {
		t.Fatalf("C_Logout: %v", err)
	}
	before := pins.Load()
	if _, err := tok.GenerateKey(context.Background(), signer.ECDSAP256, "after-logout"); err != nil {
		t.Fatalf("GenerateKey after C_Logout: %v", err)
	}
	if got := pins.Load() - before; got != 1 {
		t.Errorf("GenerateKey after C_Logout: PIN asked %d times, want 1", got)
	}
}

func TestWrongPIN(t *testing.T) {
	st := pkcs11test.New(t)
	var calls atomic.Int32
	cfg := st.Config()
	cfg.Secret = func() ([]byte, error) { calls.Add(1); return []byte("0000"), nil }
	tok, err := pkcs11.OpenStore(context.Background(), cfg)
	var pe *pkcs11.PINError
	if !errors.As(err, &pe) || !errors.Is(err, signer.ErrWrongPassphrase) || pe.Code != p11.CKR_PIN_INCORRECT {
		t.Fatalf("OpenStore with a wrong PIN: %v, %v; want a *PINError wrapping ErrWrongPassphrase", tok, err)
	}
	if calls.Load() != 1 {
		t.Errorf("PIN asked %d times, want once (never retried)", calls.Load())
	}
	if msg := err.Error(); strings.Contains(msg, "0000") {
		t.Errorf("the error shows the PIN: %q", msg)
	}

	// A PIN that goes wrong after opening (changed behind the signer's
	// back): the re-login fails once, and later signs fail without asking
	// the token again.
	calls.Store(0)
	var wrong atomic.Bool
	cfg.Secret = func() ([]byte, error) {
		calls.Add(1)
		if wrong.Load() {
			return []byte("0000"), nil
		}
		return []byte(st.PIN), nil
	}
	tok, err = pkcs11.OpenStore(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer tok.Close()
	k := generateKey(t, tok, signer.ECDSAP256, "pin")
	wrong.Store(true)
	other := otherHandle(t, st)
	if err := other.CloseAllSessions(tok.SlotID()); err != nil {
		t.Fatal(err)
	}
	before := calls.Load()
	for i := range 3 {
		_, err := k.SignContext(context.Background(), []byte("x"))
		if !errors.As(err, &pe) || !errors.Is(err, signer.ErrWrongPassphrase) {
			t.Fatalf("sign %d after the PIN went wrong: %v, want a *PINError", i, err)
		}
	}
	if got := calls.Load() - before; got != 1 {
		t.Errorf("PIN tried %d times over three signs, want once", got)
	}
}

// TestRecoverOneClosedSession closes only the session the next sign will
// take: the sign is retried once, and the pool keeps no dead session.
func TestRecoverOneClosedSession(t *testing.T) {
	st, tok := openToken(t, pkcs11.WithFaults)
	k := generateKey(t, tok, signer.ECDSAP256, "one")
	fillPool(t, tok, k)
	other := otherHandle(t, st)
	idle := tok.IdleSessions()
	// The pool hands out its most recently used session first.
	if err := other.CloseSession(p11.SessionHandle(idle[len(idle)-1])); err != nil {
		t.Fatal(err)
	}
	col := signertrace.NewCollector()
	msg := []byte("one session closed")
	sig, err := k.SignContext(col.WithContext(context.Background()), msg)
	if err != nil {
		t.Fatalf("sign after its session was closed: %v", err)
	}
	if err := signertest.VerifyStd(signer.ECDSAP256, k.Public(), msg, sig); err != nil {
		t.Fatal(err)
	}
	if got := col.Summary().Count(signertrace.CountRetries); got != 1 {
		t.Errorf("%d retries, want 1", got)
	}
	for _, sh := range tok.IdleSessions() {
		if _, err := other.GetSessionInfo(p11.SessionHandle(sh)); err != nil {
			t.Errorf("idle session %d: %v", sh, err)
		}
	}
}

// TestSignThroughChurn: while 16 goroutines sign, another logs the token's
// user out and closes every session of the application, over and over,
// through a second handle on the module. No sign may fail while its
// context has time left: the pool logs in again and opens fresh sessions
// as often as it takes, and a key lookup that meets a logout is not
// mistaken for a missing key.
func TestSignThroughChurn(t *testing.T) {
	for _, alg := range []signer.Algorithm{signer.Ed25519, signer.ECDSAP256} {
		t.Run(alg.String(), func(t *testing.T) {
			st, tok := openToken(t, pkcs11.WithFaults)
			k := generateKey(t, tok, alg, "churn")
			other := otherHandle(t, st)
			sh, err := other.OpenSession(tok.SlotID(), p11.CKF_SERIAL_SESSION)
			if err != nil {
				t.Fatal(err)
			}
			// Logouts come at any time. Sessions are closed between the
			// pool's calls into the module, not during one: SoftHSM2
			// frees a session closed while another thread signs on it,
			// and crashes.
			gate := tok.Gate()

			stop := make(chan struct{})
			var churns atomic.Int32
			churned := make(chan struct{})
			go func() {
				defer close(churned)
				for i := 0; ; i++ {
					select {
					case <-stop:
						return
					default:
					}
					if i%2 == 0 {
						other.Logout(sh) // fails when no one is logged in
					} else {
						gate.Lock()
						other.CloseAllSessions(tok.SlotID())
						gate.Unlock()
						sh, _ = other.OpenSession(tok.SlotID(), p11.CKF_SERIAL_SESSION)
					}
					churns.Add(1)
					time.Sleep(200 * time.Microsecond)
				}
			}()

			const signers, signs = 16, 25
			var wg sync.WaitGroup
			var ok atomic.Int32
			for g := range signers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := range signs {
						ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
						msg := []byte(fmt.Sprintf("churn %d/%d", g, i))
						sig, err := k.SignContext(ctx, msg)
						cancel()
						if err != nil {
							t.Errorf("goroutine %d sign %d: %v", g, i, err)
							return
						}
						if err := signertest.VerifyStd(alg, k.Public(), msg, sig); err != nil {
							t.Errorf("goroutine %d sign %d: %v", g, i, err)
							return
						}
						ok.Add(1)
					}
				}()
			}
			wg.Wait()
			close(stop)
			<-churned
			other.CloseSession(sh)
			t.Logf("%d signs through %d logouts and C_CloseAllSessions", ok.Load(), churns.Load())
			if ok.Load() != signers*signs {
				t.Errorf("%d of %d signs succeeded", ok.Load(), signers*signs)
			}
			signAndVerify(t, k)
		})
	}
}

// TestRetryBound: an operation that keeps failing in a way a retry may
// mend is tried at most 1+32 times in all when its context has no
// deadline, whether or not it can be cancelled, and until the deadline
// when it has one. The three run at once, on sessions of their own.
func TestRetryBound(t *testing.T) {
	_, tok := openToken(t)
	const deadline = 2200 * time.Millisecond // 33 tries take about 1.4 s of backoff
	cancelable, cancel := context.WithCancel(context.Background())
	defer cancel()
	timed, cancelTimed := context.WithTimeout(context.Background(), deadline)
	defer cancelTimed()
	cases := []struct {
		name string
		ctx  context.Context
	}{{"background", context.Background()}, {"cancelable", cancelable}, {"deadline", timed}}
	tries := make([]int, len(cases))
	took := make([]time.Duration, len(cases))
	var wg sync.WaitGroup
	for i, c := range cases {
		wg.Add(1)
		go func() {
			defer wg.Done()
			start := time.Now()
			err := tok.Do(c.ctx, func(uint) error {
				tries[i]++
				return p11.Error(p11.CKR_USER_NOT_LOGGED_IN) // logged in: the pool finds nothing to mend
			})
			took[i] = time.Since(start)
			if !errors.Is(err, p11.Error(p11.CKR_USER_NOT_LOGGED_IN)) {
				t.Errorf("%s: Do = %v, want CKR_USER_NOT_LOGGED_IN", c.name, err)
			}
		}()
	}
	wg.Wait()
	for i, c := range cases[:2] {
		if tries[i] != 33 {
			t.Errorf("%s: tried %d times, want 33 (32 retries)", c.name, tries[i])
		}
	}
	if tries[2] <= 33 || took[2] < deadline-100*time.Millisecond {
		t.Errorf("with a %v deadline: tried %d times in %v, want more than 33, until the deadline", deadline, tries[2], took[2])
	}
	// An error the pool cannot mend is not retried.
	n := 0
	err := tok.Do(context.Background(), func(uint) error { n++; return p11.Error(p11.CKR_GENERAL_ERROR) })
	if !errors.Is(err, p11.Error(p11.CKR_GENERAL_ERROR)) || n != 1 {
		t.Errorf("CKR_GENERAL_ERROR outside a lookup or a sign: %v after %d tries, want it after 1", err, n)
	}
}

// TestDeletedKey: a Signer whose key is deleted under it fails with
// ErrKeyNotFound after its handle was refused once and three lookups,
// all in the one retry loop of a sign, found none; the token's login
// state is asked before each lookup and once more after the last only.
func TestDeletedKey(t *testing.T) {
	ctx := context.Background()
	_, tok := openToken(t)
	k := generateKey(t, tok, signer.Ed25519, "deleted")
	signAndVerify(t, k)
	if err := tok.DeleteKey(ctx, signer.KeyRef{Label: "deleted"}); err != nil {
		t.Fatal(err)
	}
	col := signertrace.NewCollector()
	sig, err := k.SignContext(col.WithContext(ctx), []byte("gone"))
	if !errors.Is(err, signer.ErrKeyNotFound) {
		t.Fatalf("sign with a deleted key: %x, %v; want ErrKeyNotFound", sig, err)
	}
	sum := col.Summary()
	if got := sum.Count(signertrace.CountRetries); got != 3 {
		t.Errorf("%d retries, want 3 (the refused handle, two lookups that found nothing)", got)
	}
	// C_SignInit; then per lookup C_GetSessionInfo and
	// C_FindObjects{Init,,Final}; C_GetSessionInfo after the last.
	if got := sum.Count(signertrace.CountRoundTrips); got != 1+3*4+1 {
		t.Errorf("%d round trips, want %d", got, 1+3*4+1)
	}
}
