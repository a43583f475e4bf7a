package specext

import (
	"encoding/binary"
	"testing"
	"time"

	"github.com/signerkit/signerkit/internal/simtime"
	"github.com/signerkit/signerkit/signer/signertrace"
)

var testStages = []signertrace.StageInfo{
	{Stage: signertrace.StageWire, Duration: 3 * time.Millisecond, Source: signertrace.Modeled, Profile: "nanosplus"},
	{Stage: signertrace.StageDevice, Duration: 297 * time.Millisecond, Source: signertrace.Modeled, Slept: true, Profile: "nanosplus"},
}

func TestRoundTrip(t *testing.T) {
	for _, c := range []struct {
		left time.Duration
		has  bool
	}{{0, false}, {0, true}, {300 * time.Millisecond, true}, {-time.Second, true}} {
		b := AppendTimeLeft(nil, c.left, c.has)
		if binary.BigEndian.Uint32(b) != Flag|TimeLeftSize || len(b) != 4+TimeLeftSize {
			t.Fatalf("frame %x", b)
		}
		left, has, err := ParseTimeLeft(b[4:])
		if err != nil || has != c.has || has && left != max(c.left, 0) {
			t.Errorf("time left %v %v → %v %v %v", c.left, c.has, left, has, err)
		}
	}
	for _, exceeded := range []bool{false, true} {
		b := AppendReply(nil, exceeded, 526*time.Millisecond, testStages)
		n := binary.BigEndian.Uint32(b)
		if n&Flag == 0 || int(n&^Flag) != len(b)-4 {
			t.Fatalf("frame %x", b)
		}
		r, err := ParseReply(b[4:])
		if err != nil || r.Exceeded != exceeded || len(r.Stages) != 2 || r.Stages[1] != testStages[1] {
			t.Fatalf("reply: %+v, %v", r, err)
		}
		if exceeded && r.Modeled != 526*time.Millisecond || !exceeded && r.Modeled != 0 {
			t.Errorf("modeled %v", r.Modeled)
		}
	}
	// Beyond the bounds ParseReply takes, the simulator sends the bound.
	long := []signertrace.StageInfo{{Stage: signertrace.StageDevice, Duration: time.Hour, Source: signertrace.Modeled}}
	r, err := ParseReply(AppendReply(nil, true, time.Hour, long)[4:])
	if err != nil || r.Modeled != simtime.MaxStageDuration || r.Stages[0].Duration != simtime.MaxStageDuration {
		t.Errorf("an hour: %+v, %v", r, err)
	}
}

func FuzzParse(f *testing.F) {
	f.Add(AppendTimeLeft(nil, time.Second, true)[4:])
	f.Add(AppendReply(nil, false, 0, testStages)[4:])
	f.Add(AppendReply(nil, true, time.Second, testStages[:1])[4:])
	f.Add([]byte{KindDeadline, 0xff, 0, 0, 0, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, p []byte) {
		if left, has, err := ParseTimeLeft(p); err == nil && (left < 0 || !has && left != 0) {
			t.Fatalf("time left %v %v from %x", left, has, p)
		}
		r, err := ParseReply(p)
		if err != nil {
			return
		}
		if r.Modeled < 0 || r.Modeled > simtime.MaxStageDuration || !r.Exceeded && r.Modeled != 0 {
			t.Fatalf("modeled %v from %x", r.Modeled, p)
		}
		for _, s := range r.Stages {
			if s.Duration < 0 || s.Duration > simtime.MaxStageDuration || s.Source != signertrace.Modeled {
				t.Fatalf("stage %+v from %x", s, p)
			}
		}
		// What parses, encodes to what parses the same.
		again, err := ParseReply(AppendReply(nil, r.Exceeded, r.Modeled, r.Stages)[4:])
		if err != nil || again.Exceeded != r.Exceeded || again.Modeled != r.Modeled || len(again.Stages) != len(r.Stages) {
			t.Fatalf("re-encoded %+v: %+v, %v", r, again, err)
		}
	})
}
