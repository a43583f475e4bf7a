package simtime

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/signerkit/signerkit/signer"
)

func TestSpendAccounted(t *testing.T) {
	var col signer.Collector
	// An hour of modeled time under a 10 s deadline: sleeping it would
	// end in DeadlineExceeded.
	ctx, cancel := context.WithTimeout(col.WithContext(context.Background()), 10*time.Second)
	defer cancel()
	if err := Spend(ctx, Accounted, signer.StageDevice, time.Hour, "p"); err != nil {
		t.Fatalf("accounted mode: %v", err)
	}
	st := col.Summary().Stage(signer.StageDevice)
	if st.Modeled != time.Hour || st.Slept != 0 {
		t.Fatalf("stage = %+v", st)
	}
}

func TestSpendRealtime(t *testing.T) {
	var col signer.Collector
	ctx := col.WithContext(context.Background())
	start := time.Now()
	if err := Spend(ctx, Realtime, signer.StageDevice, 20*time.Millisecond, "p"); err != nil {
		t.Fatal(err)
	}
	if time.Since(start) < 20*time.Millisecond {
		t.Fatal("realtime mode did not sleep")
	}
	if st := col.Summary().Stage(signer.StageDevice); st.Slept != 20*time.Millisecond {
		t.Fatalf("stage = %+v", st)
	}
	ctx2, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	if err := Spend(ctx2, Realtime, signer.StageDevice, time.Hour, "p"); !errors.Is(err, context.DeadlineExceeded) {
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
	in := []signer.StageInfo{
		{Stage: signer.StageDevice, Duration: 131 * time.Millisecond, Source: signer.Modeled, Profile: "yubihsm2 (docs/latency-profiles.md §2)"},
		{Stage: signer.StageWire, Duration: 3 * time.Millisecond, Source: signer.Modeled, Slept: true},
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
			if i.Duration < 0 || i.Source != signer.Modeled {
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
