package yubihsm_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/yubihsm/yubihsmsim"
)

// TestTrace checks the stages of a first sign (which opens the Signer's
// session) and of a second one.
func TestTrace(t *testing.T) {
	_, url := sim(t, yubihsmsim.Config{})
	k := openKey(t, url, nil)
	type rec struct {
		mu     sync.Mutex
		stages []signer.StageInfo
		counts map[signer.Counter]int64
	}
	traced := func() (context.Context, *rec) {
		r := &rec{counts: map[signer.Counter]int64{}}
		return signer.WithTrace(context.Background(), &signer.Trace{
			StageDone: func(i signer.StageInfo) { r.mu.Lock(); r.stages = append(r.stages, i); r.mu.Unlock() },
			Count:     func(c signer.Counter, n int64) { r.mu.Lock(); r.counts[c] += n; r.mu.Unlock() },
		}), r
	}
	has := func(r *rec, st signer.Stage, src signer.Source) *signer.StageInfo {
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
	if has(r, signer.StageSession, signer.Measured) == nil || has(r, signer.StageTransport, signer.Measured) == nil {
		t.Errorf("first sign: stages %+v, want session and transport", r.stages)
	}
	dev := has(r, signer.StageDevice, signer.Modeled)
	if dev == nil || dev.Duration != 132*time.Millisecond || dev.Profile != yubihsmsim.YubiHSM2.Name || dev.Slept {
		t.Errorf("first sign: modeled device stage %+v, want 132 ms accounted from %q", dev, yubihsmsim.YubiHSM2.Name)
	}
	// Create Session, Authenticate Session, Sign.
	if r.counts[signer.CountRoundTrips] != 3 || r.counts[signer.CountBytesOut] == 0 || r.counts[signer.CountBytesIn] == 0 {
		t.Errorf("first sign: counters %v", r.counts)
	}
	ctx, r = traced()
	if err := signVerified(t, ctx, k, make([]byte, 108)); err != nil {
		t.Fatal(err)
	}
	if has(r, signer.StageSession, signer.Measured) != nil || r.counts[signer.CountRoundTrips] != 1 {
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
	ctx := signer.WithTrace(context.Background(), &signer.Trace{StageDone: func(i signer.StageInfo) {
		switch i.Stage {
		case signer.StageTransport:
			transport += i.Duration
		case signer.StageDevice:
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
