package bench_test

import (
	"context"
	"errors"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/signerkit/signerkit/inprocess"
	"github.com/signerkit/signerkit/internal/bench"
	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/signer/signertrace"
)

// TestSignReportsStages runs one row of a fake device through Sign, as
// testing.Benchmark does in programs, and checks the metrics it reports.
func TestSignReportsStages(t *testing.T) {
	calls := 0
	be := bench.Backend{
		Name:      "fake-device",
		Algorithm: signer.Ed25519,
		Traced:    true,
		Messages: func(size int) func() []byte {
			return func() []byte {
				calls++
				return make([]byte, size+calls%7) // a new message every time
			}
		},
		Open: func(context.Context, bench.Params) (*bench.Instance, error) {
			key, err := inprocess.Generate(signer.Ed25519)
			if err != nil {
				return nil, err
			}
			inst := bench.FromSigner(key)
			inst.Sign = func(ctx context.Context, msg []byte) ([]byte, error) {
				tr := signertrace.ContextTrace(ctx)
				// A transport of 3 ms that holds 1 ms of slept wire time,
				// and 100 ms of device time that was only accounted.
				tr.MeasuredDuration(signertrace.StageTransport, 3*time.Millisecond)
				tr.Modeled(signertrace.StageWire, time.Millisecond, true, "fake")
				tr.Modeled(signertrace.StageDevice, 100*time.Millisecond, false, "fake")
				tr.Add(signertrace.CountAPDUs, 2)
				return key.SignContext(context.Background(), msg)
			}
			return inst, nil
		},
	}
	res := testing.Benchmark(func(b *testing.B) { bench.Sign(b, be, bench.Params{Payload: 32}) })
	if res.N == 0 {
		t.Fatal("the row did not run")
	}
	if calls < res.N {
		t.Errorf("%d messages for %d signs: the source must be called once per sign", calls, res.N)
	}
	want := map[string]float64{
		"transport-ms/op":      2, // 3 measured, less 1 slept inside it
		"wire-ms/op":           1,
		"wire-modeled-ms/op":   1,
		"device-ms/op":         100,
		"device-modeled-ms/op": 100,
		"modeled-ms/op":        101,
		"apdus/op":             2,
	}
	for unit, v := range want {
		if got, ok := res.Extra[unit]; !ok || math.Abs(got-v) > 1e-9 {
			t.Errorf("%s = %v (reported: %v), want %v", unit, got, ok, v)
		}
	}
	hostMs := float64(res.T) / float64(res.N) / 1e6
	if e2e := res.Extra["e2e-ms/op"]; math.Abs(e2e-(hostMs+100)) > 1e-6 {
		t.Errorf("e2e-ms/op = %v, want host %v + 100 accounted", e2e, hostMs)
	}
	for _, unit := range []string{"transport-modeled-ms/op", "sign-ms/op", "kdf-ms/op"} {
		if _, ok := res.Extra[unit]; ok {
			t.Errorf("%s reported for a stage with no modeled time or no report", unit)
		}
	}
}

func TestSignFailsOnABadSignature(t *testing.T) {
	key, err := inprocess.Generate(signer.Ed25519)
	if err != nil {
		t.Fatal(err)
	}
	be := bench.Backend{
		Name:      "wrong",
		Algorithm: signer.Ed25519,
		Open: func(context.Context, bench.Params) (*bench.Instance, error) {
			inst := bench.FromSigner(key)
			inst.Sign = func(ctx context.Context, msg []byte) ([]byte, error) {
				return key.SignContext(ctx, append(msg, 0)) // signs another message
			}
			return inst, nil
		},
	}
	res := testing.Benchmark(func(b *testing.B) { bench.Sign(b, be, bench.Params{Payload: 32}) })
	if res.N != 0 {
		t.Errorf("a row whose signatures do not verify reported %d signs", res.N)
	}
}

// openGenerated opens a new in-process key for alg.
func openGenerated(alg signer.Algorithm) func(context.Context, bench.Params) (*bench.Instance, error) {
	return func(context.Context, bench.Params) (*bench.Instance, error) {
		k, err := inprocess.Generate(alg)
		if err != nil {
			return nil, err
		}
		return bench.FromSigner(k), nil
	}
}

func TestUntracedRowsReportEndToEnd(t *testing.T) {
	be := bench.Backend{Name: "plain", Algorithm: signer.Ed25519, Open: openGenerated(signer.Ed25519)}
	res := testing.Benchmark(func(b *testing.B) { bench.Sign(b, be, bench.Params{Payload: 64}) })
	if res.N == 0 {
		t.Fatal("the row did not run")
	}
	hostMs := float64(res.T) / float64(res.N) / 1e6
	if e2e, ok := res.Extra["e2e-ms/op"]; !ok || math.Abs(e2e-hostMs) > 1e-9 {
		t.Errorf("e2e-ms/op = %v (reported: %v), want the host time %v", e2e, ok, hostMs)
	}
	if _, ok := res.Extra["modeled-ms/op"]; ok {
		t.Error("an untraced row reported modeled time")
	}
}

func TestAlwaysStagesReportedAsZero(t *testing.T) {
	be := bench.Backend{Name: "sessions", Algorithm: signer.Ed25519, Traced: true,
		Stages: []signertrace.Stage{signertrace.StageSession}, Open: openGenerated(signer.Ed25519)}
	res := testing.Benchmark(func(b *testing.B) { bench.Sign(b, be, bench.Params{Payload: 32}) })
	if v, ok := res.Extra["session-ms/op"]; !ok || v != 0 {
		t.Errorf("session-ms/op = %v (reported: %v), want 0 reported", v, ok)
	}
	if _, ok := res.Extra["device-ms/op"]; ok {
		t.Error("a stage neither reached nor listed was reported")
	}
}

// A backend whose key is known only once opened leaves Algorithm zero;
// its signatures are verified under the instance's algorithm.
func TestAlgorithmFromTheInstance(t *testing.T) {
	be := bench.Backend{Name: "late", Open: openGenerated(signer.ECDSAP256)}
	if res := testing.Benchmark(func(b *testing.B) { bench.Sign(b, be, bench.Params{Payload: 32}) }); res.N == 0 {
		t.Error("a row with the algorithm from its instance did not run")
	}
	inst, err := be.Open(context.Background(), bench.Params{})
	if err != nil {
		t.Fatal(err)
	}
	inst.Algorithm = 0
	sig, err := inst.Sign(context.Background(), []byte("m"))
	if err != nil {
		t.Fatal(err)
	}
	if err := inst.Verify(be, []byte("m"), sig); err == nil {
		t.Error("verified with no algorithm known")
	}
	inst.Algorithm = signer.Ed25519 // wrong: the key is P-256
	if err := inst.Verify(be, []byte("m"), sig); err == nil {
		t.Error("verified under the wrong algorithm")
	}
}

// TestVerifyRow runs one verification row through Verify, as
// testing.Benchmark does in programs: a case whose verification passes
// reports its verifications, and one that starts failing part way
// reports none.
func TestVerifyRow(t *testing.T) {
	calls := 0
	ok := bench.VerifyCase{Name: "counting", Setup: func(int) (func() error, error) {
		return func() error { calls++; return nil }, nil
	}}
	res := testing.Benchmark(func(b *testing.B) { bench.Verify(b, ok, 32) })
	if res.N == 0 {
		t.Fatal("the row did not run")
	}
	if calls != res.N+1 {
		t.Errorf("%d verifications for a row of %d: want the row and one before the clock", calls, res.N)
	}
	left := 5
	failing := bench.VerifyCase{Name: "failing", Setup: func(int) (func() error, error) {
		return func() error {
			if left--; left < 0 {
				return errors.New("bad signature")
			}
			return nil
		}, nil
	}}
	if res := testing.Benchmark(func(b *testing.B) { bench.Verify(b, failing, 32) }); res.N != 0 {
		t.Errorf("a row whose verification fails reported %d verifications", res.N)
	}
}

// TestVerifyCaseSizes checks that a case without Payloads runs over
// LargePayloads, up to 1 MiB.
func TestVerifyCaseSizes(t *testing.T) {
	if got := (bench.VerifyCase{}).Sizes(); !slices.Equal(got, bench.LargePayloads) || slices.Max(got) != 1<<20 {
		t.Errorf("default sizes %v, want LargePayloads up to 1 MiB", got)
	}
	if got := (bench.VerifyCase{Payloads: []int{7}}).Sizes(); !slices.Equal(got, []int{7}) {
		t.Errorf("sizes %v, want the case's own [7]", got)
	}
}

// TestRegisterVerifyDerivesSetup registers a case by Sign alone and runs
// the Setup that RegisterVerify makes of it: it checks the signature Sign
// made, and its verification is Sign's over that message and signature.
func TestRegisterVerifyDerivesSetup(t *testing.T) {
	var gotMsg, gotSig []byte
	good := true
	bench.RegisterVerify(bench.VerifyCase{Name: "test-derived", Sign: func(size int) (bench.Signed, error) {
		msg := make([]byte, size)
		return bench.Signed{Msg: msg, Sig: []byte{byte(size)}, Verify: func(msg, sig []byte) error {
			gotMsg, gotSig = msg, sig
			if !good {
				return errors.New("bad signature")
			}
			return nil
		}}, nil
	}})
	var c bench.VerifyCase
	for _, o := range bench.VerifyCases() {
		if o.Name == "test-derived" {
			c = o
		}
	}
	if c.Setup == nil {
		t.Fatal("RegisterVerify left Setup nil")
	}
	verify, err := c.Setup(33)
	if err != nil {
		t.Fatal(err)
	}
	if err := verify(); err != nil || len(gotMsg) != 33 || !slices.Equal(gotSig, []byte{33}) {
		t.Errorf("verify: %v over %d bytes and %v; want Sign's 33-byte message and signature", err, len(gotMsg), gotSig)
	}
	good = false
	if verify() == nil {
		t.Error("the derived verification passed what Sign's Verify refused")
	}
	if _, err := c.Setup(33); err == nil {
		t.Error("Setup returned a signature that does not verify")
	}
	for _, bad := range []bench.VerifyCase{{Name: ""}, {Name: "no-setup"}, {Name: "test-derived", Sign: c.Sign}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("RegisterVerify(%+v) did not panic", bad.Name)
				}
			}()
			bench.RegisterVerify(bad)
		}()
	}
}
