//go:build cgo

package pkcs11_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	p11 "github.com/miekg/pkcs11"

	"github.com/signerkit/signerkit/pkcs11"
	"github.com/signerkit/signerkit/pkcs11/pkcs11test"
	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/signer/signertest"
	"github.com/signerkit/signerkit/signer/signertrace"
)

// TestLocking signs from many goroutines on a module initialized with
// each kind of mutex, and checks which kind the module got: with
// LockingSpin it must have created mutexes through signerkit's callbacks,
// with LockingOS none.
func TestLocking(t *testing.T) {
	for _, locking := range []pkcs11.Locking{pkcs11.LockingSpin, pkcs11.LockingOS} {
		t.Run(locking.String(), func(t *testing.T) {
			if loaded := pkcs11.LoadedModules(); len(loaded) != 0 {
				t.Fatalf("modules still loaded by an earlier test: %v", loaded)
			}
			created, _ := pkcs11.SpinMutexCounts()
			_, tok := openToken(t, lockingMode(locking), poolSize(3))
			want := locking
			if !pkcs11.SpinLockingSupported {
				want = pkcs11.LockingOS
			}
			if got := tok.ModuleLocking(); got != want {
				t.Fatalf("module initialized with %v mutexes, want %v", got, want)
			}
			// The module took the mutexes it was offered: it created some
			// of ours in C_Initialize, or none when it got the OS's.
			now, _ := pkcs11.SpinMutexCounts()
			if took := now > created; took != (want == pkcs11.LockingSpin) {
				t.Fatalf("module initialized for %v mutexes created %d of signerkit's", want, now-created)
			}
			for _, alg := range []signer.Algorithm{signer.ECDSAP256, signer.Ed25519} {
				k := generateKey(t, tok, alg, "locking-"+alg.String())
				var wg sync.WaitGroup
				errs := make(chan error, 8)
				for g := range 8 {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for i := range 25 {
							msg := fmt.Appendf(nil, "goroutine %d sign %d", g, i)
							sig, err := k.SignContext(context.Background(), msg)
							if err == nil {
								err = signertest.VerifyStd(alg, k.Public(), msg, sig)
							}
							if err != nil {
								errs <- err
								return
							}
						}
					}()
				}
				wg.Wait()
				close(errs)
				for err := range errs {
					t.Errorf("%v: %v", alg, err)
				}
			}
		})
	}
}

// TestSpinMutex runs signerkit's module mutexes as a module would, from C
// threads: an increment guarded by one of them must lose nothing.
func TestSpinMutex(t *testing.T) {
	if !pkcs11.SpinLockingSupported {
		t.Skip("LockingSpin needs Linux")
	}
	const threads, iters = 4, 200000
	count, rv := pkcs11.SpinMutexSelfTest(threads, iters)
	if rv != p11.CKR_OK {
		t.Fatalf("mutex calls returned %#x", rv)
	}
	if count != threads*iters {
		t.Fatalf("counter %d after %d guarded increments: the mutex let two threads in", count, threads*iters)
	}
}

// TestDirectSign covers the path that calls C_SignInit and C_Sign without
// miekg/pkcs11: a buffer too small for the signature, and what happens to
// the session when either call fails.
func TestDirectSign(t *testing.T) {
	_, tok := openToken(t, poolSize(1))
	ed := generateKey(t, tok, signer.Ed25519, "direct-ed25519")
	if !ed.DirectSign() && runtime.GOOS == "linux" {
		t.Fatal("the SoftHSM2 module's function list was not read: signs go through miekg/pkcs11")
	}
	ctx := context.Background()

	t.Run("BufferTooSmall", func(t *testing.T) {
		for _, n := range []int{1, 63, 64, 200} {
			msg := fmt.Appendf(nil, "a %d-byte buffer", n)
			var trips atomic.Int64
			tctx := signertrace.WithTrace(ctx, &signertrace.Trace{Count: func(c signertrace.Counter, d int64) {
				if c == signertrace.CountRoundTrips {
					trips.Add(d)
				}
			}})
			sig, err := ed.SignRaw(tctx, pkcs11.CKMEdDSA, msg, n)
			if err != nil {
				t.Fatalf("buffer %d: %v", n, err)
			}
			if !ed25519.Verify(ed.Public().(ed25519.PublicKey), msg, sig) {
				t.Fatalf("buffer %d: %d-byte signature does not verify", n, len(sig))
			}
			// C_SignInit and C_Sign, and a second C_Sign when the
			// 64-byte signature did not fit.
			want := int64(2)
			if n < ed25519.SignatureSize {
				want = 3
			}
			if got := trips.Load(); ed.DirectSign() && got != want {
				t.Errorf("buffer %d: %d round trips reported, want %d", n, got, want)
			}
		}
	})

	t.Run("SignInitFails", func(t *testing.T) {
		idle := tok.IdleSessions()
		const vendorMech = 0x8000_5eed // a mechanism no module has
		_, err := ed.SignRaw(ctx, vendorMech, make([]byte, 32), 0)
		var perr *pkcs11.Error
		if !errors.As(err, &perr) || perr.Op != "C_SignInit" || perr.Code != p11.CKR_MECHANISM_INVALID {
			t.Fatalf("an unknown mechanism: %v, want C_SignInit's CKR_MECHANISM_INVALID", err)
		}
		// No operation started: the session is clean and kept.
		if got := tok.IdleSessions(); !slices.Equal(got, idle) {
			t.Errorf("idle sessions %v after a failed C_SignInit, want %v kept", got, idle)
		}
	})

	t.Run("SignFails", func(t *testing.T) {
		rsaKey := makeKey(t, tok, signer.RSAPKCS1v15, "direct-rsa")
		if _, err := rsaKey.SignContext(ctx, []byte("fills the pool")); err != nil {
			t.Fatal(err)
		}
		idle := tok.IdleSessions()
		if len(idle) != 1 {
			t.Fatalf("idle sessions %v, want 1", idle)
		}
		// CKM_RSA_PKCS takes at most k-11 bytes: C_SignInit succeeds and
		// C_Sign refuses (SoftHSM2 says CKR_GENERAL_ERROR).
		_, err := rsaKey.SignRaw(ctx, p11.CKM_RSA_PKCS, bytes.Repeat([]byte{1}, 300), 0)
		var perr *pkcs11.Error
		if !errors.As(err, &perr) || perr.Op != "C_Sign" {
			t.Fatalf("300 bytes for CKM_RSA_PKCS: %v, want a C_Sign error", err)
		}
		// The session the operation may have stayed active in is closed.
		if got := tok.IdleSessions(); slices.Contains(got, idle[0]) {
			t.Errorf("idle sessions %v still hold the session of the failed C_Sign", got)
		}
		msg := []byte("after the refusal")
		sig, err := rsaKey.SignContext(ctx, msg)
		if err != nil {
			t.Fatalf("sign after the refusal: %v", err)
		}
		if err := signertest.VerifyStd(signer.RSAPKCS1v15, rsaKey.Public(), msg, sig); err != nil {
			t.Fatal(err)
		}
	})
}

// TestSignNotLoggedIn: a C_Sign refused with CKR_USER_NOT_LOGGED_IN (the
// token logged out between C_SignInit and C_Sign) logs in and is retried,
// on another session: a module may have left the operation active in the
// first.
func TestSignNotLoggedIn(t *testing.T) {
	_, tok := openToken(t, poolSize(2))
	var seen []uint
	err := tok.Do(context.Background(), func(sh uint) error {
		seen = append(seen, sh)
		if len(seen) == 1 {
			return &pkcs11.Error{Op: "C_Sign", Code: p11.CKR_USER_NOT_LOGGED_IN}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("retry after the login: %v", err)
	}
	if len(seen) != 2 || seen[0] == seen[1] {
		t.Fatalf("sessions used %v, want the retry on a second one", seen)
	}
	if idle := tok.IdleSessions(); slices.Contains(idle, seen[0]) {
		t.Errorf("idle sessions %v still hold the session of the refused C_Sign", idle)
	}
}

// TestConformanceViaMiekg runs the conformance suite on keys that sign
// through miekg/pkcs11's SignInit and Sign, the path taken when a module's
// function list cannot be read.
func TestConformanceViaMiekg(t *testing.T) {
	for _, alg := range []signer.Algorithm{signer.Ed25519, signer.ECDSAP256, signer.RSAPSS} {
		t.Run(alg.String(), func(t *testing.T) {
			_, tok := openToken(t)
			ki := newKey(t, tok, alg, "via-miekg")
			signertest.Run(t, func() (signer.Signer, error) {
				k, err := openKey(context.Background(), tok, ki.Ref())
				if err != nil {
					return nil, err
				}
				k.SignViaMiekg()
				if k.DirectSign() {
					k.Close()
					return nil, errors.New("key still signs directly")
				}
				return k, nil
			}, signertest.Options{})
		})
	}
}

func TestLockingRefused(t *testing.T) {
	st := pkcs11test.New(t)
	cfg := st.Config()
	cfg.Locking = pkcs11.Locking(7)
	if tok, err := pkcs11.OpenStore(context.Background(), cfg); !errors.Is(err, signer.ErrInvalidArgument) {
		if tok != nil {
			tok.Close()
		}
		t.Fatalf("OpenStore with Locking(7): %v, want ErrInvalidArgument", err)
	}
	if loaded := pkcs11.LoadedModules(); len(loaded) != 0 {
		t.Errorf("modules loaded after a refused OpenStore: %v", loaded)
	}
}

// TestOperationLeftActive: a session that comes back to the pool with a
// sign operation still active (as from a module that did not end one) is
// closed when the next sign meets CKR_OPERATION_ACTIVE, and that sign is
// retried on a new session and succeeds.
func TestOperationLeftActive(t *testing.T) {
	st, tok := openToken(t, poolSize(1))
	k := generateKey(t, tok, signer.Ed25519, "left-active")
	ctx := context.Background()
	if _, err := k.SignContext(ctx, []byte("opens the session")); err != nil {
		t.Fatal(err)
	}
	other := otherHandle(t, st)
	var stuck uint
	err := tok.Do(ctx, func(sh uint) error {
		stuck = sh
		s := p11.SessionHandle(sh)
		if err := other.FindObjectsInit(s, []*p11.Attribute{p11.NewAttribute(p11.CKA_CLASS, p11.CKO_PRIVATE_KEY), p11.NewAttribute(p11.CKA_LABEL, "left-active")}); err != nil {
			return err
		}
		hs, _, err := other.FindObjects(s, 2)
		other.FindObjectsFinal(s)
		if err != nil || len(hs) != 1 {
			return fmt.Errorf("key: %d found, %v", len(hs), err)
		}
		return other.SignInit(s, []*p11.Mechanism{p11.NewMechanism(pkcs11.CKMEdDSA, nil)}, hs[0])
	})
	if err != nil {
		t.Fatal(err)
	}
	if idle := tok.IdleSessions(); !slices.Contains(idle, stuck) {
		t.Fatalf("idle sessions %v, want %d back with its operation active", idle, stuck)
	}
	col := signertrace.NewCollector()
	msg := []byte("after the operation left active")
	sig, err := k.SignContext(col.WithContext(ctx), msg)
	if err != nil {
		t.Fatalf("sign on a pool whose session has an operation active: %v", err)
	}
	if err := signertest.VerifyStd(signer.Ed25519, k.Public(), msg, sig); err != nil {
		t.Fatal(err)
	}
	if got := col.Summary().Count(signertrace.CountRetries); got != 1 {
		t.Errorf("%d retries reported, want 1", got)
	}
	if idle := tok.IdleSessions(); slices.Contains(idle, stuck) {
		t.Errorf("idle sessions %v still hold session %d", idle, stuck)
	}
}
