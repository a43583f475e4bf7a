package signertrace_test

import (
	"context"
	"crypto"
	"crypto/ed25519"
	"errors"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/signerkit/signerkit/inprocess"
	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/signer/signertest"
	"github.com/signerkit/signerkit/signer/signertrace"
)

// modeledSigner wraps a key the way a simulated device does: it reports a
// modeled device stage it does not sleep, and fails on request.
type modeledSigner struct {
	*inprocess.Signer
	device time.Duration
	fail   bool
}

func (m *modeledSigner) SignContext(ctx context.Context, msg []byte) ([]byte, error) {
	if m.fail {
		return nil, signer.ErrRejected
	}
	signertrace.ContextTrace(ctx).Modeled(signertrace.StageDevice, m.device, false, "test profile")
	return m.Signer.SignContext(ctx, msg)
}

func TestInstrumentedStatsPerLabel(t *testing.T) {
	key, err := inprocess.Generate(signer.Ed25519)
	if err != nil {
		t.Fatal(err)
	}
	inner := &modeledSigner{Signer: key, device: 100 * time.Millisecond}
	m := signertrace.Instrument(inner)
	ctx := context.Background()
	sign := func(label string, msg string) {
		t.Helper()
		c := ctx
		if label != "" {
			c = signertrace.WithLabel(ctx, label)
		}
		sig, err := m.SignContext(c, []byte(msg))
		if err != nil {
			t.Fatal(err)
		}
		if !ed25519.Verify(key.Public().(ed25519.PublicKey), []byte(msg), sig) {
			t.Fatal("signature does not verify")
		}
	}
	// Modeled times of hours dwarf the microseconds of host time, so the
	// figures can be checked to the histogram's precision without timing
	// anything.
	for i := range 10 {
		inner.device = time.Duration(i+1) * 10 * time.Hour // 10 … 100 h
		sign("prevote", "vote")
	}
	inner.device = 500 * time.Hour
	sign("proposal", "block")
	sign("", "unlabelled")
	inner.fail = true
	if _, err := m.SignContext(signertrace.WithLabel(ctx, "prevote"), []byte("x")); !errors.Is(err, signer.ErrRejected) {
		t.Fatalf("failing sign: %v", err)
	}
	inner.fail = false
	if _, err := m.Sign(nil, []byte("msg"), crypto.Hash(0)); err != nil {
		t.Fatal(err)
	}

	snap := m.Snapshot()
	var labels []string
	for _, l := range snap.Labels {
		labels = append(labels, l.Label)
	}
	if got := strings.Join(labels, ","); got != "prevote,proposal,sign" {
		t.Fatalf("labels = %s, want prevote,proposal,sign", got)
	}
	pv, _ := snap.Label("prevote")
	if pv.Count != 10 || pv.Errors != 1 {
		t.Errorf("prevote count/errors = %d/%d, want 10/1", pv.Count, pv.Errors)
	}
	// Latency is wall time plus the modeled device time; percentiles come
	// from a histogram with buckets 1/64 wide.
	near := func(name string, got, modeled time.Duration) {
		t.Helper()
		if got < modeled-modeled/128 || got > modeled+modeled/128 {
			t.Errorf("%s = %v, want %v within 1/128", name, got, modeled)
		}
	}
	near("prevote min", pv.Min, 10*time.Hour)
	near("prevote p50", pv.P50, 50*time.Hour)
	near("prevote p90", pv.P90, 90*time.Hour)
	near("prevote p99", pv.P99, 100*time.Hour)
	near("prevote max", pv.Max, 100*time.Hour)
	near("prevote total", pv.Total, 550*time.Hour)
	near("prevote mean", pv.Mean(), 55*time.Hour)
	if !(pv.Min <= pv.P50 && pv.P50 <= pv.P90 && pv.P90 <= pv.P99 && pv.P99 <= pv.Max) {
		t.Errorf("prevote stats out of order: %+v", pv)
	}
	pr, _ := snap.Label("proposal")
	near("proposal p50", pr.P50, 500*time.Hour)
	if s, ok := snap.Label(signertrace.DefaultLabel); !ok || s.Count != 2 {
		t.Errorf("default label: %+v, want 2 signs (one SignContext without a label, one Sign)", s)
	}
	if _, ok := snap.Label("precommit"); ok {
		t.Error("a label that was never used has statistics")
	}
	if !snap.Taken.After(snap.Since) {
		t.Errorf("snapshot Taken %v not after Since %v", snap.Taken, snap.Since)
	}

	text := snap.String()
	for _, want := range []string{"label", "p99 ms", "total ms", "prevote", "proposal", "10"} {
		if !strings.Contains(text, want) {
			t.Errorf("text table lacks %q:\n%s", want, text)
		}
	}
	// 500 h in milliseconds, plus the sign's wall time: up to a second of
	// it, however slow the machine (the wall time is not what is checked).
	if ms := regexp.MustCompile(`\b1800000\d{3}\.\d{3}\b`); !ms.MatchString(text) {
		t.Errorf("text table lacks 500 h in milliseconds (%s):\n%s", ms, text)
	}
	var md strings.Builder
	if err := snap.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(md.String()), "\n")
	if len(lines) != 5 || !strings.HasPrefix(lines[0], "| label | count | errors | min (ms)") || !strings.HasPrefix(lines[1], "|---|---:|") {
		t.Errorf("markdown table:\n%s", md.String())
	}
	for _, l := range lines {
		if strings.Count(l, "|") != 11 {
			t.Errorf("markdown row %q does not have 10 columns", l)
		}
	}

	m.Reset()
	if got := m.Snapshot().Labels; len(got) != 0 {
		t.Errorf("after Reset: %+v", got)
	}
}

func TestInstrumentedMarkdownEscapesLabels(t *testing.T) {
	key, _ := inprocess.Generate(signer.Ed25519)
	m := signertrace.Instrument(key)
	if _, err := m.SignContext(signertrace.WithLabel(context.Background(), "a|b"), nil); err != nil {
		t.Fatal(err)
	}
	var md strings.Builder
	m.Snapshot().WriteMarkdown(&md)
	if !strings.Contains(md.String(), `| a\|b |`) {
		t.Errorf("label not escaped:\n%s", md.String())
	}
}

func TestInstrumentedKeepsCallerTrace(t *testing.T) {
	key, _ := inprocess.Generate(signer.Ed25519)
	m := signertrace.Instrument(key)
	col := signertrace.NewCollector()
	if _, err := m.SignContext(col.WithContext(context.Background()), []byte("m")); err != nil {
		t.Fatal(err)
	}
	if got := col.Summary().Stage(signertrace.StageSign).Reports; got != 1 {
		t.Errorf("caller's collector saw %d sign stages, want 1", got)
	}
}

func TestInstrumentedConformance(t *testing.T) {
	signertest.Run(t, func() (signer.Signer, error) {
		k, err := inprocess.Generate(signer.ECDSASecp256k1)
		if err != nil {
			return nil, err
		}
		return signertrace.Instrument(k), nil
	}, signertest.Options{})
}

func TestInstrumentedConcurrent(t *testing.T) {
	key, _ := inprocess.Generate(signer.Ed25519)
	m := signertrace.Instrument(key)
	labels := []string{"proposal", "prevote", "precommit"}
	var wg sync.WaitGroup
	for g := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx := signertrace.WithLabel(context.Background(), labels[g%3])
			for range 50 {
				if _, err := m.SignContext(ctx, []byte("vote")); err != nil {
					t.Error(err)
					return
				}
				_ = m.Snapshot()
			}
		}()
	}
	wg.Wait()
	for _, l := range m.Snapshot().Labels {
		if l.Count != 100 {
			t.Errorf("%s: %d signs, want 100", l.Label, l.Count)
		}
	}
}
