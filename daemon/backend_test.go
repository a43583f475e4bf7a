package daemon

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/signerkit/signerkit/signer"
)

// TestHealthStateSign: a sign in flight makes the record fresh; a sign's
// answer is recorded, a refusal that says nothing of the device is not;
// concurrent signs and readers leave nothing in flight.
func TestHealthStateSign(t *testing.T) {
	var h healthState
	if _, fresh := h.fresh(time.Hour); fresh {
		t.Fatal("fresh before any answer")
	}
	h.signStarted()
	if _, fresh := h.fresh(0); !fresh {
		t.Fatal("not fresh with a sign in flight")
	}
	h.signDone(nil)
	last, fresh := h.fresh(time.Hour)
	if !fresh || last.err != nil || last.at.IsZero() {
		t.Fatalf("after a signature: %+v fresh=%v", last, fresh)
	}
	if _, fresh := h.fresh(0); fresh {
		t.Fatal("fresh with nothing in flight and a zero interval")
	}
	h.signStarted()
	h.signDone(errors.New("bad message"))
	if got := h.get(); got != last {
		t.Fatalf("a refusal was recorded: %+v", got)
	}
	h.signStarted()
	h.signDone(fmt.Errorf("unplugged: %w", signer.ErrDisconnected))
	if got := h.get(); !errors.Is(got.err, signer.ErrDisconnected) {
		t.Fatalf("a lost device was not recorded: %+v", got)
	}

	var wg sync.WaitGroup
	stop := make(chan struct{})
	for range 4 {
		wg.Go(func() {
			for range 1000 {
				h.signStarted()
				h.signDone(nil)
			}
		})
	}
	var readers sync.WaitGroup
	readers.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
				h.fresh(time.Second)
			}
		}
	})
	wg.Wait()
	close(stop)
	readers.Wait()
	if n := h.inflight.Load(); n != 0 {
		t.Fatalf("%d signs in flight after all finished", n)
	}
	if last, fresh := h.fresh(time.Hour); !fresh || last.err != nil {
		t.Fatalf("after concurrent signs: %+v fresh=%v", last, fresh)
	}
}

func gaugeValue(t *testing.T, g prometheus.Gauge) float64 {
	t.Helper()
	reg := prometheus.NewRegistry()
	reg.MustRegister(g)
	mfs, err := reg.Gather()
	if err != nil || len(mfs) != 1 || len(mfs[0].GetMetric()) != 1 {
		t.Fatalf("gather: %v %v", mfs, err)
	}
	return mfs[0].GetMetric()[0].GetGauge().GetValue()
}

// TestOneReopenLoop: many downs of the same signer at once, and downs
// while it is being reopened, run one reopen loop: never two opens at a
// time.
func TestOneReopenLoop(t *testing.T) {
	t.Parallel()
	priv := ed25519.NewKeyFromSeed(bytesOf(3, 32))
	var gone atomic.Bool
	var opens, inOpen, maxInOpen atomic.Int32
	var back atomic.Bool
	open := func(ctx context.Context, _ string) (signer.Signer, error) {
		if opens.Add(1) == 1 {
			return &flakyKey{priv: priv, gone: &gone}, nil
		}
		n := inOpen.Add(1)
		defer inOpen.Add(-1)
		for m := maxInOpen.Load(); n > m && !maxInOpen.CompareAndSwap(m, n); m = maxInOpen.Load() {
		}
		select {
		case <-time.After(5 * time.Millisecond):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if back.Load() {
			return &flakyKey{priv: priv, gone: &gone}, nil
		}
		return nil, fmt.Errorf("flaky: no device: %w", signer.ErrDeviceNotFound)
	}
	b, err := openBackend(context.Background(), "flaky:", open, slog.New(slog.DiscardHandler), newMetrics("test"), time.Second, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	b.minBackoff = time.Millisecond
	s, _ := b.current()
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() { b.down(s, signer.ErrDisconnected) })
	}
	wg.Wait()
	if cur, cause := b.current(); cur != nil || !errors.Is(cause, signer.ErrDisconnected) {
		t.Fatalf("after down: %v, %v", cur, cause)
	}
	if v := gaugeValue(t, b.upG); v != 0 {
		t.Errorf("backend_up = %v while down", v)
	}
	waitFor(t, "reopen attempts", func() bool { return opens.Load() >= 4 })
	for range 16 { // while reopening: nothing to take down
		b.down(s, signer.ErrDisconnected)
		b.down(nil, signer.ErrDisconnected)
	}
	waitFor(t, "more reopen attempts", func() bool { return opens.Load() >= 8 })
	back.Store(true)
	waitFor(t, "the device back", func() bool { cur, _ := b.current(); return cur != nil })
	if n := maxInOpen.Load(); n != 1 {
		t.Errorf("%d opens at a time, want 1 (one reopen loop)", n)
	}
	if v := gaugeValue(t, b.upG); v != 1 {
		t.Errorf("backend_up = %v when back", v)
	}
	if ok, why := b.healthy(context.Background()); !ok {
		t.Errorf("not healthy when back: %s", why)
	}
}

// TestCloseStopsReopen: Close cuts short an open in progress and waits
// for the reopen loop; a down after Close starts none.
func TestCloseStopsReopen(t *testing.T) {
	t.Parallel()
	priv := ed25519.NewKeyFromSeed(bytesOf(4, 32))
	var gone atomic.Bool
	var opens atomic.Int32
	opening := make(chan struct{}, 1)
	openErr := make(chan error, 1)
	open := func(ctx context.Context, _ string) (signer.Signer, error) {
		if opens.Add(1) == 1 {
			return &flakyKey{priv: priv, gone: &gone}, nil
		}
		opening <- struct{}{}
		<-ctx.Done()
		openErr <- ctx.Err()
		return nil, ctx.Err()
	}
	b, err := openBackend(context.Background(), "flaky:", open, slog.New(slog.DiscardHandler), newMetrics("test"), time.Second, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	b.minBackoff = time.Millisecond
	s, _ := b.current()
	b.down(s, signer.ErrDisconnected)
	<-opening
	closed := make(chan struct{})
	go func() { _ = b.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not stop the reopen")
	}
	if err := <-openErr; !errors.Is(err, context.Canceled) {
		t.Errorf("the open in progress ended with %v, want canceled", err)
	}
	b.down(s, signer.ErrDisconnected) // nothing to do: no loop, no panic
	if cur, _ := b.current(); cur != nil {
		t.Error("a signer after Close")
	}
	if n := opens.Load(); n != 2 {
		t.Errorf("%d opens, want 2", n)
	}
}

// TestKeyBindings: the bindings are read once for all chains; each new
// binding is added to the file, and a chain bound to another key is
// refused.
func TestKeyBindings(t *testing.T) {
	dir := t.TempDir()
	a := ed25519.NewKeyFromSeed(bytesOf(1, 32)).Public().(ed25519.PublicKey)
	b := ed25519.NewKeyFromSeed(bytesOf(2, 32)).Public().(ed25519.PublicKey)
	kb, err := readKeyBindings(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, bind := range []struct {
		chain string
		pub   ed25519.PublicKey
	}{{"one", a}, {"two", b}, {"one", a}, {"three", a}} {
		if err := kb.bind(bind.chain, bind.pub); err != nil {
			t.Fatalf("bind %s: %v", bind.chain, err)
		}
	}
	if err := kb.bind("two", a); err == nil {
		t.Fatal("a chain bound to another key was accepted")
	}
	for chain, want := range map[string]ed25519.PublicKey{"one": a, "two": b, "three": a} {
		if got, err := BoundKey(dir, chain); err != nil || !got.Equal(want) {
			t.Errorf("BoundKey(%s) = %x, %v", chain, got, err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, KeysFile), []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := readKeyBindings(dir); err == nil {
		t.Error("a damaged bindings file was read")
	}
}

// TestCheckParsesValidators: check returns each validator's network,
// address and allowlist (nil for allow_any), which New and Reload use
// instead of parsing them again.
func TestCheckParsesValidators(t *testing.T) {
	cfg, pc, err := parseConfig([]byte(validConfig), false)
	if err != nil {
		t.Fatal(err)
	}
	if len(pc) != len(cfg.Chains) {
		t.Fatalf("%d chains parsed, want %d", len(pc), len(cfg.Chains))
	}
	for i, ch := range cfg.Chains {
		if len(pc[i]) != len(ch.Validators) {
			t.Fatalf("chain %s: %d validators parsed, want %d", ch.ID, len(pc[i]), len(ch.Validators))
		}
		for j, vc := range ch.Validators {
			network, address, _ := vc.Network()
			keys, _ := vc.AllowKeys()
			pv := pc[i][j]
			if pv.network != network || pv.address != address || !slices.EqualFunc(pv.allow, keys, func(x, y ed25519.PublicKey) bool { return x.Equal(y) }) {
				t.Errorf("chain %s validator %d: %+v", ch.ID, j, pv)
			}
		}
	}
	cfg.Chains[0].Validators[0].Allow = nil
	cfg.Chains[0].Validators[0].AllowAny = true
	pc, err = cfg.check(false)
	if err != nil {
		t.Fatal(err)
	}
	if pc[0][0].allow != nil {
		t.Errorf("allow_any parsed as %v, want nil (any)", pc[0][0].allow)
	}
}
