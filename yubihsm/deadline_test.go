package yubihsm_test

// Tests of deadlines in accounted mode: a simulator that only accounts its
// modeled time, sleeping none of it, still honours the caller's deadline
// over the connector's HTTP API, as ledgersim does in process: a sign
// whose modeled time runs past the deadline fails with
// context.DeadlineExceeded, having accounted the time up to it.

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/signer/signertrace"
	"github.com/signerkit/signerkit/yubihsm"
	"github.com/signerkit/signerkit/yubihsm/yubihsmsim"
)

// The tests model a sign far longer than the real time a test takes, even
// on a loaded machine, and deadlines that differ from it by seconds:
// whether a sign fits is decided by modeled time alone.
const (
	slowSignTime = 20 * time.Second // a modeled Sign EdDSA
	shortTime    = 10 * time.Second // a deadline the sign does not fit in
	longTime     = time.Hour        // a deadline it fits in
)

// slowSign models every Sign EdDSA as slowSignTime.
var slowSign = yubihsmsim.Profile{Name: "slow", EdDSA: []yubihsmsim.Point{{Size: 0, Time: slowSignTime}}}

// deviceTime returns a context whose trace adds up the modeled device
// time reported under it.
func deviceTime(ctx context.Context) (context.Context, func() time.Duration) {
	var mu sync.Mutex
	var sum time.Duration
	ctx = signertrace.WithTrace(ctx, &signertrace.Trace{StageDone: func(i signertrace.StageInfo) {
		if i.Source == signertrace.Modeled && i.Stage == signertrace.StageDevice {
			mu.Lock()
			sum += i.Duration
			mu.Unlock()
		}
	}})
	return ctx, func() time.Duration { mu.Lock(); defer mu.Unlock(); return sum }
}

// longRequests lets a request last as long as the longest deadline
// here: the deadline a request carries to the simulator is the earlier of
// its caller's and RequestTimeout, as a real device that took that long
// would hit RequestTimeout.
func longRequests(cfg yubihsm.Config) yubihsm.Config {
	cfg.RequestTimeout = 2 * longTime
	return cfg
}

// TestAccountedDeadline: in accounted mode a sign whose modeled time runs
// past the caller's deadline fails with context.DeadlineExceeded, having
// accounted only the time up to the deadline, without sleeping it; with a
// longer deadline it succeeds; modeled time under one context adds up.
func TestAccountedDeadline(t *testing.T) {
	dev, url := sim(t, yubihsmsim.Config{Time: yubihsmsim.Accounted, Profile: &slowSign})
	st := openStore(t, longRequests(config(url)))
	k := openSigner(t, st, generate(t, st, signer.Ed25519, "slow").Ref())
	msg := make([]byte, 108)
	if err := signVerified(t, context.Background(), k, msg); err != nil { // the session is open from here on
		t.Fatal(err)
	}

	ctx, modeled := deviceTime(context.Background())
	ctx, cancel := context.WithTimeout(ctx, shortTime)
	defer cancel()
	signs := dev.Stats().Signs
	_, err := k.SignContext(ctx, msg)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a %v sign under a %v deadline: %v, want context.DeadlineExceeded", slowSignTime, shortTime, err)
	}
	var de *yubihsm.DeadlineError
	if !errors.As(err, &de) {
		t.Fatalf("error %v (%T) is no *yubihsm.DeadlineError", err, err)
	}
	if de.Modeled != slowSignTime || de.Accounted <= 0 || de.Accounted > shortTime {
		t.Errorf("modeled %v, accounted %v: want %v, and at most %v of it", de.Modeled, de.Accounted, slowSignTime, shortTime)
	}
	if got := modeled(); got != de.Accounted {
		t.Errorf("the trace has %v of device time, the error says %v was accounted", got, de.Accounted)
	}
	if dev.Stats().Signs != signs+1 {
		t.Errorf("the device made %d signs, want 1: it runs the command the caller gave up on", dev.Stats().Signs-signs)
	}

	// With a longer deadline the same sign succeeds, on a new session.
	ctx, modeled = deviceTime(context.Background())
	ctx, cancel = context.WithTimeout(ctx, longTime)
	defer cancel()
	if err := signVerified(t, ctx, k, msg); err != nil {
		t.Fatalf("a %v sign under %v: %v", slowSignTime, longTime, err)
	}
	if got := modeled(); got != slowSignTime {
		t.Errorf("device time %v, want %v", got, slowSignTime)
	}

	// Under one deadline that holds one sign and not two, the second sign
	// runs past it: the first one's modeled time has passed.
	const deadline = slowSignTime + shortTime
	ctx, modeled = deviceTime(context.Background())
	ctx, cancel = context.WithTimeout(ctx, deadline)
	defer cancel()
	if err := signVerified(t, ctx, k, msg); err != nil {
		t.Fatalf("first sign under %v: %v", deadline, err)
	}
	_, err = k.SignContext(ctx, msg)
	if !errors.As(err, &de) || de.Accounted <= 0 || de.Accounted > deadline-slowSignTime {
		t.Fatalf("second sign under %v: %v, want a DeadlineError accounting at most %v", deadline, err, deadline-slowSignTime)
	}
	if got := modeled(); got != slowSignTime+de.Accounted || got > deadline {
		t.Errorf("device time under the deadline %v, want %v + %v", got, slowSignTime, de.Accounted)
	}
}

// TestTimeLeftHeader: the caller's deadline reaches the connector only
// through the simulator's HTTPClient: the package's own client sends
// nothing a real yubihsm-connector does not expect.
func TestTimeLeftHeader(t *testing.T) {
	dev := yubihsmsim.New(yubihsmsim.Config{Time: yubihsmsim.Accounted, Profile: &slowSign})
	h := dev.Handler()
	var mu sync.Mutex
	var seen []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/connector/api" {
			mu.Lock()
			seen = append(seen, r.Header.Get("X-Signerkit-Time-Left"))
			mu.Unlock()
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	requests := func() []string {
		mu.Lock()
		defer mu.Unlock()
		out := seen
		seen = nil
		return out
	}

	// A client for a real connector sends no such header, whatever its
	// deadline.
	real := config(srv.URL)
	real.HTTPClient = nil
	st := openStore(t, real)
	ki := generate(t, st, signer.Ed25519, "real")
	k := openSigner(t, st, ki.Ref())
	ctx, cancel := context.WithTimeout(context.Background(), longTime)
	defer cancel()
	if err := signVerified(t, ctx, k, make([]byte, 32)); err != nil {
		t.Fatalf("sign through a client for a real connector: %v", err)
	}
	got := requests()
	if len(got) == 0 {
		t.Fatal("no requests seen")
	}
	for i, v := range got {
		if v != "" {
			t.Errorf("request %d of a client for a real connector carries X-Signerkit-Time-Left: %q", i, v)
		}
	}

	// The simulator's client sends it, at most the deadline; without one,
	// at most RequestTimeout, which bounds every request.
	simCfg := longRequests(config(srv.URL))
	sim := openStore(t, simCfg)
	ks := openSigner(t, sim, ki.Ref())
	requests()
	if err := signVerified(t, context.Background(), ks, make([]byte, 32)); err != nil {
		t.Fatal(err)
	}
	for i, v := range requests() {
		if n, err := strconv.ParseInt(v, 10, 64); err != nil || n <= 0 || time.Duration(n) > simCfg.RequestTimeout {
			t.Errorf("request %d without a deadline carries X-Signerkit-Time-Left: %q, want at most RequestTimeout", i, v)
		}
	}
	ctx, cancel = context.WithTimeout(context.Background(), longTime)
	defer cancel()
	if err := signVerified(t, ctx, ks, make([]byte, 32)); err != nil {
		t.Fatal(err)
	}
	got = requests()
	if len(got) != 1 {
		t.Fatalf("%d requests for one sign on an open session", len(got))
	}
	if n, err := strconv.ParseInt(got[0], 10, 64); err != nil || n <= 0 || time.Duration(n) > longTime {
		t.Errorf("X-Signerkit-Time-Left: %q, want at most %v in nanoseconds", got[0], longTime)
	}
}
