package simtime

import (
	"context"
	"errors"
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
