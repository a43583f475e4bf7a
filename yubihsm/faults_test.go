package yubihsm_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/signerkit/signerkit/internal/simtime"
	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/signer/signertest"
	"github.com/signerkit/signerkit/yubihsm"
	"github.com/signerkit/signerkit/yubihsm/yubihsmsim"
)

func signOK(t *testing.T, k *yubihsm.Signer, what string) {
	t.Helper()
	msg := []byte("a vote: " + what)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	sig, err := k.SignContext(ctx, msg)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if err := signertest.VerifyStd(k.Algorithm(), k.Public(), msg, sig); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// signVerified signs msg with k under ctx and, when the sign succeeds,
// checks the signature with the standard library (failing t if it does not
// verify); it returns the sign's error.
func signVerified(t testing.TB, ctx context.Context, k *yubihsm.Signer, msg []byte) error {
	t.Helper()
	sig, err := k.SignContext(ctx, msg)
	if err == nil {
		if verr := signertest.VerifyStd(k.Algorithm(), k.Public(), msg, sig); verr != nil {
			t.Errorf("a signature of %q: %v", msg, verr)
		}
	}
	return err
}

// signFails checks that a sign meeting a fault the device or connector
// answers fails on that answer with an error wrapping want, not by its
// deadline. The deadline is long, so that a loaded machine cannot run it
// out: the sign must end without DeadlineExceeded, before it.
func signFails(t *testing.T, k *yubihsm.Signer, what string, want ...error) {
	t.Helper()
	const deadline = 10 * time.Second
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	start := time.Now()
	sig, err := k.SignContext(ctx, []byte("a vote"))
	if took := time.Since(start); took >= deadline || errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("%s: failed after %v (%v), by its %v deadline rather than on the fault", what, took, err, deadline)
	}
	checkFailed(t, what, sig, err, want...)
}

func checkFailed(t *testing.T, what string, sig []byte, err error, want ...error) {
	t.Helper()
	if err == nil || sig != nil {
		t.Fatalf("%s: sign succeeded", what)
	}
	for _, w := range want {
		if !errors.Is(err, w) {
			t.Errorf("%s: %v, want an error wrapping %v", what, err, w)
		}
	}
}

// signHangs checks that a sign on a hung device fails with an error
// wrapping context.DeadlineExceeded at its deadline, give or take
// hangSlack, and that k signs again once the device is released. A hang
// waits out its whole deadline, so it has a short one: what is checked is
// how far past it the sign returns, not its length.
//
// hangSlack must hold for the best of hangTries hangs: a sign late by
// design (held up for pingGrace, say) is late on every try, one that a
// loaded CI machine stalls is not. Every try must end within hangBound,
// which only catches a hang. Each try hangs the device afresh on a sign
// whose session is open, so that what is left in flight when it is
// released is that sign and the Close Session of the session it dropped:
// hung tries in a row would leave a Create Session in flight instead,
// which the device may still run after the release, opening a session no
// one knows of.
func signHangs(t *testing.T, dev *yubihsmsim.Device, k *yubihsm.Signer) {
	t.Helper()
	// hangSlack is 15 times the most a hung sign overran its deadline in
	// 300 tries with -race, up to four test binaries at once on this
	// 2-core VM (17 ms), and half of pingGrace.
	const (
		deadline  = 250 * time.Millisecond
		hangSlack = 250 * time.Millisecond
		hangTries = 5
		hangBound = 10 * time.Second
	)
	best := time.Duration(1<<63 - 1)
	for try := 0; try < hangTries && best > deadline+hangSlack; try++ {
		release := dev.Hang()
		ctx, cancel := context.WithTimeout(context.Background(), deadline)
		start := time.Now()
		sig, err := k.SignContext(ctx, []byte("a vote"))
		took := time.Since(start)
		cancel()
		release()
		if took > hangBound {
			t.Errorf("hung device: returned after %v, past its %v deadline", took, deadline)
		}
		checkFailed(t, "hung device", sig, err, context.DeadlineExceeded)
		best = min(best, took)
		t.Logf("hung device: try %d returned after %v (%v deadline)", try+1, took, deadline)
		signOK(t, k, "after the hang")
	}
	if best > deadline+hangSlack {
		t.Errorf("hung device: %d tries all returned more than %v past their %v deadline (best after %v)", hangTries, hangSlack, deadline, best)
	}
}

// openKey generates an Ed25519 key through a Store, which stays open
// until t ends, and opens it as a Signer.
func openKey(t *testing.T, url string, cfg func(*yubihsm.Config)) *yubihsm.Signer {
	t.Helper()
	c := config(url)
	if cfg != nil {
		cfg(&c)
	}
	st := openStore(t, c)
	return openSigner(t, st, generate(t, st, signer.Ed25519, "faults").Ref())
}

func TestFaults(t *testing.T) {
	dev := yubihsmsim.New(yubihsmsim.Config{})
	srv, err := yubihsmsim.NewServer(dev)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	k := openKey(t, srv.URL(), nil)
	signOK(t, k, "before any fault")

	t.Run("ConnectorDown", func(t *testing.T) {
		if err := srv.Down(); err != nil {
			t.Fatal(err)
		}
		signFails(t, k, "connector down", signer.ErrDisconnected)
		if err := srv.Up(); err != nil {
			t.Fatal(err)
		}
		signOK(t, k, "connector back")
	})
	t.Run("Unplugged", func(t *testing.T) {
		dev.Inject(yubihsmsim.FaultUnplugged, 0)
		signFails(t, k, "device unplugged", signer.ErrDisconnected)
		dev.Clear(yubihsmsim.FaultUnplugged)
		signOK(t, k, "device back")
	})
	t.Run("SessionExpired", func(t *testing.T) {
		signOK(t, k, "session up")
		dev.ExpireSessions()
		ctx, retries := countRetries(context.Background())
		if err := signVerified(t, ctx, k, []byte("after expiry")); err != nil {
			t.Fatalf("sign after the session expired: %v", err)
		}
		if retries.Load() != 1 {
			t.Errorf("%d retries, want 1 (INVALID SESSION, new session, retry)", retries.Load())
		}
	})
	for _, f := range []struct {
		name  string
		fault yubihsmsim.Fault
	}{
		{"CorruptMAC", yubihsmsim.FaultCorruptMAC},
		{"Garbled", yubihsmsim.FaultGarble},
		{"WrongLength", yubihsmsim.FaultWrongLength},
	} {
		t.Run(f.name, func(t *testing.T) {
			dev.Inject(f.fault, 1)
			signFails(t, k, f.name, signer.ErrProtocol)
			signOK(t, k, "after "+f.name)
		})
	}
	t.Run("Hang", func(t *testing.T) {
		signHangs(t, dev, k)
	})
	// Sessions dropped after a fault were closed, not left to expire: only
	// the Signer's is open (the Store's went with the unplugged device).
	waitOpenSessions(t, dev, 1, "the Signer's; the Store's was lost when the device was unplugged")
}

func TestSessionsFull(t *testing.T) {
	dev, url := sim(t, yubihsmsim.Config{})
	k := openKey(t, url, nil) // its Store holds one session; k has none yet
	var others []*yubihsm.Store
	for dev.OpenSessions() < yubihsmsim.Sessions {
		st, err := yubihsm.OpenStore(context.Background(), config(url))
		if err != nil {
			t.Fatal(err)
		}
		others = append(others, st)
	}
	if _, err := yubihsm.OpenStore(context.Background(), config(url)); !errors.Is(err, signer.ErrBusy) {
		t.Errorf("OpenStore on a full device: %v, want ErrBusy", err)
	}
	signFails(t, k, "sessions full", signer.ErrBusy)
	others[0].Close()
	signOK(t, k, "after a session was freed")
	for _, c := range others[1:] {
		c.Close()
	}
	if n := dev.OpenSessions(); n != 2 {
		t.Errorf("%d sessions open on the device, want 2 (the Store's and the Signer's)", n)
	}
}

func TestRotation(t *testing.T) {
	dev, url := sim(t, yubihsmsim.Config{})
	k := openKey(t, url, func(c *yubihsm.Config) { c.MessageLimit = 20 })
	before := dev.Stats().SessionsCreated
	for i := range 200 {
		ctx, retries := countRetries(context.Background())
		if err := signVerified(t, ctx, k, []byte{byte(i)}); err != nil {
			t.Fatalf("sign %d: %v", i, err)
		}
		if retries.Load() != 0 {
			t.Fatalf("sign %d needed a retry", i)
		}
	}
	// 200 signs at 19 commands per session (the counter starts at 1).
	if made := dev.Stats().SessionsCreated - before; made < 10 || made > 12 {
		t.Errorf("%d sessions made for 200 signs with a limit of 20", made)
	}
	k.Close()
	waitOpenSessions(t, dev, 1, "the Store's; rotated sessions must be closed")
}

func TestKeepAlive(t *testing.T) {
	clock := simtime.NewManual(time.Unix(0, 0))
	dev, url := sim(t, yubihsmsim.Config{Clock: clock})
	k := openKey(t, url, func(c *yubihsm.Config) { c.KeepAlive = 20 * time.Millisecond })
	signOK(t, k, "first")
	// The pings tick in real time while the device's clock jumps, so
	// the jumps are small beside the 30 s idle limit: a session (the
	// Signer's or the Store's) whose ping a loaded machine delays past one
	// jump must not expire for it, as it would not with a real clock.
	for range 12 {
		echoes := dev.Stats().Echoes
		clock.Advance(5 * time.Second)
		deadline := time.Now().Add(5 * time.Second)
		for dev.Stats().Echoes <= echoes+1 && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		if dev.Stats().Echoes <= echoes+1 {
			t.Fatal("no keepalive reached the device")
		}
	}
	// 60 s of device time have passed; the pings kept the session.
	ctx, retries := countRetries(context.Background())
	if err := signVerified(t, ctx, k, []byte("later")); err != nil {
		t.Fatal(err)
	}
	if retries.Load() != 0 || dev.Stats().SessionsExpired != 0 {
		t.Errorf("session expired despite the keepalive: %d retries, %d expired", retries.Load(), dev.Stats().SessionsExpired)
	}
}

func TestExpiryWithoutKeepAlive(t *testing.T) {
	clock := simtime.NewManual(time.Unix(0, 0))
	dev, url := sim(t, yubihsmsim.Config{Clock: clock})
	k := openKey(t, url, func(c *yubihsm.Config) { c.KeepAlive = -1 })
	signOK(t, k, "first")
	clock.Advance(yubihsmsim.IdleTimeout + time.Second)
	ctx, retries := countRetries(context.Background())
	if err := signVerified(t, ctx, k, []byte("after 31 s")); err != nil {
		t.Fatal(err)
	}
	if retries.Load() != 1 || dev.Stats().SessionsExpired == 0 {
		t.Errorf("%d retries, %d expired; want 1 retry after the device expired the session", retries.Load(), dev.Stats().SessionsExpired)
	}
}

// TestCloseDuringPing closes a Signer while its keepalive Echo waits on a
// slow device: Close must let the ping finish and then close the session,
// rather than cut the ping short and leave a session it can no longer
// close holding a device slot until the idle timeout.
func TestCloseDuringPing(t *testing.T) {
	dev, url := sim(t, yubihsmsim.Config{})
	k := openKey(t, url, func(c *yubihsm.Config) { c.KeepAlive = 10 * time.Millisecond })
	signOK(t, k, "first")
	release := dev.Hang()
	defer release()
	hung := dev.Stats().Hung
	for deadline := time.Now().Add(5 * time.Second); dev.Stats().Hung == hung; {
		if time.Now().After(deadline) {
			t.Fatal("no keep-alive ping reached the hung device in 5 s")
		}
		time.Sleep(time.Millisecond)
	}
	// A ping is now waiting on the device.
	closed := make(chan struct{})
	go func() {
		k.Close()
		close(closed)
	}()
	time.Sleep(50 * time.Millisecond)
	select {
	case <-closed:
		t.Fatal("Close returned while its ping still waited on the device")
	default:
	}
	release()
	<-closed
	waitOpenSessions(t, dev, 1, "the Store's, after the Signer's Close")
}
