package simtime

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/signerkit/signerkit/signer/signertrace"
)

func TestSpendAccounted(t *testing.T) {
	var col signertrace.Collector
	// An hour of modeled time with no deadline: accounted, not slept.
	ctx := col.WithContext(context.Background())
	if err := Spend(ctx, Accounted, signertrace.StageDevice, time.Hour, "p"); err != nil {
		t.Fatalf("accounted mode: %v", err)
	}
	st := col.Summary().Stage(signertrace.StageDevice)
	if st.Modeled != time.Hour || st.Slept != 0 {
		t.Fatalf("stage = %+v", st)
	}
}

// TestSpendAccountedDeadline: in accounted mode the modeled time under a
// context adds up against its deadline; the stage that would pass it is
// accounted up to the deadline and fails with DeadlineExceeded, at once.
func TestSpendAccountedDeadline(t *testing.T) {
	var col signertrace.Collector
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	// A value context derived from ctx shares its budget.
	ctx = col.WithContext(ctx)
	for range 3 {
		if err := Spend(ctx, Accounted, signertrace.StageWire, 19*time.Minute, "p"); err != nil {
			t.Fatalf("within the deadline: %v", err)
		}
	}
	if got := AccountedUnder(ctx); got != 57*time.Minute {
		t.Fatalf("AccountedUnder = %v, want 57m", got)
	}
	err := Spend(ctx, Accounted, signertrace.StageDevice, 10*time.Minute, "p")
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("past the deadline: err = %v", err)
	}
	var de *DeadlineError
	if !errors.As(err, &de) || de.Stage != signertrace.StageDevice || de.Modeled != 10*time.Minute || de.Before != 57*time.Minute {
		t.Fatalf("err = %#v", err)
	}
	if ctx.Err() != nil {
		t.Fatal("the test took an hour")
	}
	// The device stage is accounted up to the deadline: a little under
	// 3 minutes, as some wall time has passed.
	dev := col.Summary().Stage(signertrace.StageDevice).Modeled
	if dev <= 0 || dev > 3*time.Minute || dev != de.Accounted {
		t.Fatalf("device stage %v, error says %v", dev, de.Accounted)
	}
	// Nothing is left: any more modeled time fails.
	if err := Spend(ctx, Accounted, signertrace.StageWire, time.Millisecond, "p"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("after the deadline: err = %v", err)
	}
	// Another context has its own budget.
	ctx2, cancel2 := context.WithTimeout(context.Background(), time.Hour)
	defer cancel2()
	if err := Spend(ctx2, Accounted, signertrace.StageDevice, 30*time.Minute, "p"); err != nil {
		t.Fatal(err)
	}
	// A budget is dropped when its context ends.
	cancel2()
	deadline := time.Now().Add(10 * time.Second)
	for AccountedUnder(ctx2) != 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if got := AccountedUnder(ctx2); got != 0 {
		t.Fatalf("after cancel: AccountedUnder = %v", got)
	}
}

// Account adds to the budget Spend keeps, and only under a deadline.
func TestAccount(t *testing.T) {
	Account(context.Background(), time.Hour) // no deadline, no Done: nothing
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	Account(ctx, time.Hour) // no deadline: nothing
	if got := AccountedUnder(ctx); got != 0 {
		t.Fatalf("without a deadline: AccountedUnder = %v", got)
	}
	ctx, cancel = context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	Account(ctx, 20*time.Minute)
	Account(ctx, -time.Minute) // ignored
	if err := Spend(ctx, Accounted, signertrace.StageDevice, 20*time.Minute, "p"); err != nil {
		t.Fatal(err)
	}
	if got := AccountedUnder(ctx); got != 40*time.Minute {
		t.Fatalf("AccountedUnder = %v, want 40m", got)
	}
	// The accounted time counts against the deadline of the next Spend.
	if err := Spend(ctx, Accounted, signertrace.StageDevice, 30*time.Minute, "p"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("past the deadline: %v", err)
	}
}

func TestSpendRealtime(t *testing.T) {
	var col signertrace.Collector
	ctx := col.WithContext(context.Background())
	start := time.Now()
	if err := Spend(ctx, Realtime, signertrace.StageDevice, 20*time.Millisecond, "p"); err != nil {
		t.Fatal(err)
	}
	if time.Since(start) < 20*time.Millisecond {
		t.Fatal("realtime mode did not sleep")
	}
	if st := col.Summary().Stage(signertrace.StageDevice); st.Slept != 20*time.Millisecond {
		t.Fatalf("stage = %+v", st)
	}
	ctx2, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	if err := Spend(ctx2, Realtime, signertrace.StageDevice, time.Hour, "p"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v", err)
	}
}

func TestModeFromEnv(t *testing.T) {
	t.Setenv(EnvVar, "realtime")
	if ModeFromEnv() != Realtime {
		t.Fatal("realtime not read")
	}
	t.Setenv(EnvVar, "")
	if ModeFromEnv() != Accounted {
		t.Fatal("default not accounted")
	}
}

func TestManual(t *testing.T) {
	var c Manual
	t0 := c.Now()
	c.Advance(31 * time.Second)
	if got := c.Now().Sub(t0); got != 31*time.Second {
		t.Fatalf("advanced %v", got)
	}
}

func TestHeaderRoundTrip(t *testing.T) {
	in := []signertrace.StageInfo{
		{Stage: signertrace.StageDevice, Duration: 131 * time.Millisecond, Source: signertrace.Modeled, Profile: "yubihsm2 (docs/latency-profiles.md §2)"},
		{Stage: signertrace.StageWire, Duration: 3 * time.Millisecond, Source: signertrace.Modeled, Slept: true},
	}
	out, err := Decode(Encode(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != len(in) {
		t.Fatalf("got %d stages", len(out))
	}
	for i := range in {
		if out[i] != in[i] {
			t.Fatalf("stage %d: got %+v want %+v", i, out[i], in[i])
		}
	}
	for _, bad := range []string{"x", "nope=1", "device=-1", "device=1;what", "device=abc"} {
		if _, err := Decode(bad); err == nil {
			t.Errorf("Decode(%q) accepted", bad)
		}
	}
}

func FuzzDecode(f *testing.F) {
	f.Add("device=131000000;profile=yubihsm2, wire=1;slept")
	f.Fuzz(func(t *testing.T, s string) {
		st, err := Decode(s)
		if err != nil {
			return
		}
		for _, i := range st {
			if i.Duration < 0 || i.Source != signertrace.Modeled {
				t.Fatalf("bad stage %+v", i)
			}
		}
	})
}

// TestDecodeLimits: a header beyond the limits is refused whole, cheaply.
func TestDecodeLimits(t *testing.T) {
	many := strings.Repeat("device=1, ", MaxEntries) + "device=1"
	long := "device=1;profile=" + strings.Repeat("p", MaxEntryLen)
	huge := strings.Repeat("device=1000000,", 600_000) // ≈ 9 MiB
	for name, v := range map[string]string{
		"too many entries": many,
		"entry too long":   long,
		"3-hour stage":     "device=" + strconv.FormatInt(int64(3*time.Hour), 10),
		"max int64":        "device=9223372036854775807",
		"huge":             huge,
	} {
		if st, err := Decode(v); err == nil {
			t.Errorf("%s: Decode accepted %d stages", name, len(st))
		}
	}
	allocs := testing.AllocsPerRun(10, func() { Decode(huge) })
	if allocs > 5 {
		t.Errorf("Decode of a %d-byte header made %v allocations", len(huge), allocs)
	}
	ok := strings.Repeat("device=1, ", MaxEntries-1) + "device=" + strconv.FormatInt(int64(MaxStageDuration), 10)
	if st, err := Decode(ok); err != nil || len(st) != MaxEntries {
		t.Errorf("Decode at the limits: %d stages, %v", len(st), err)
	}
}
