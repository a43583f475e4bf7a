package yubihsm_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/signer/signertrace"
	"github.com/signerkit/signerkit/yubihsm/yubihsmsim"
)

// TestTrace checks the stages of a first sign (which opens the Signer's
// session) and of a second one.
func TestTrace(t *testing.T) {
	_, url := sim(t, yubihsmsim.Config{})
	k := openKey(t, url, nil)
	type rec struct {
		mu     sync.Mutex
		stages []signertrace.StageInfo
		counts map[signertrace.Counter]int64
	}
	traced := func() (context.Context, *rec) {
		r := &rec{counts: map[signertrace.Counter]int64{}}
		return signertrace.WithTrace(context.Background(), &signertrace.Trace{
			StageDone: func(i signertrace.StageInfo) { r.mu.Lock(); r.stages = append(r.stages, i); r.mu.Unlock() },
			Count:     func(c signertrace.Counter, n int64) { r.mu.Lock(); r.counts[c] += n; r.mu.Unlock() },
		}), r
	}
	has := func(r *rec, st signertrace.Stage, src signertrace.Source) *signertrace.StageInfo {
		for i := range r.stages {
			if r.stages[i].Stage == st && r.stages[i].Source == src {
				return &r.stages[i]
			}
		}
		return nil
	}
	ctx, r := traced()
	if err := signVerified(t, ctx, k, make([]byte, 108)); err != nil {
		t.Fatal(err)
	}
	if has(r, signertrace.StageSession, signertrace.Measured) == nil || has(r, signertrace.StageTransport, signertrace.Measured) == nil {
		t.Errorf("first sign: stages %+v, want session and transport", r.stages)
	}
	dev := has(r, signertrace.StageDevice, signertrace.Modeled)
	if dev == nil || dev.Duration != 132*time.Millisecond || dev.Profile != yubihsmsim.YubiHSM2.Name || dev.Slept {
		t.Errorf("first sign: modeled device stage %+v, want 132 ms accounted from %q", dev, yubihsmsim.YubiHSM2.Name)
	}
	// Create Session, Authenticate Session, Sign.
	if r.counts[signertrace.CountRoundTrips] != 3 || r.counts[signertrace.CountBytesOut] == 0 || r.counts[signertrace.CountBytesIn] == 0 {
		t.Errorf("first sign: counters %v", r.counts)
	}
	ctx, r = traced()
	if err := signVerified(t, ctx, k, make([]byte, 108)); err != nil {
		t.Fatal(err)
	}
	if has(r, signertrace.StageSession, signertrace.Measured) != nil || r.counts[signertrace.CountRoundTrips] != 1 {
		t.Errorf("second sign: stages %+v, counters %v; want one round trip and no session", r.stages, r.counts)
	}
}

// TestRealtime has the simulator sleep its modeled time: the stage is
// marked slept, inside the measured transport stage.
func TestRealtime(t *testing.T) {
	profile := yubihsmsim.Profile{Name: "test (5 ms ECDSA)", ECDSAP256: 5 * time.Millisecond}
	_, url := sim(t, yubihsmsim.Config{Time: yubihsmsim.Realtime, Profile: &profile})
	st := openStore(t, config(url))
	k := openSigner(t, st, generate(t, st, signer.ECDSAP256, "realtime").Ref())
	if err := signVerified(t, context.Background(), k, []byte("warm up")); err != nil {
		t.Fatal(err)
	}
	var transport, device time.Duration
	var slept bool
	ctx := signertrace.WithTrace(context.Background(), &signertrace.Trace{StageDone: func(i signertrace.StageInfo) {
		switch i.Stage {
		case signertrace.StageTransport:
			transport += i.Duration
		case signertrace.StageDevice:
			device, slept = i.Duration, i.Slept
		}
	}})
	if err := signVerified(t, ctx, k, []byte("hello")); err != nil {
		t.Fatal(err)
	}
	if device != 5*time.Millisecond || !slept || transport < device {
		t.Errorf("device %v (slept %v) within transport %v", device, slept, transport)
	}
}
