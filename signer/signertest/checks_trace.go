package signertest

import (
	"sync"
	"time"

	"github.com/signerkit/signerkit/signer/signertrace"
)

// recorder keeps every trace report it gets.
type recorder struct {
	mu       sync.Mutex
	stages   []signertrace.StageInfo
	counts   map[signertrace.Counter]int64
	calls    int // hook calls of either kind
	negative []signertrace.Counter
}

func (r *recorder) trace() *signertrace.Trace {
	return &signertrace.Trace{
		StageDone: func(i signertrace.StageInfo) {
			r.mu.Lock()
			r.stages = append(r.stages, i)
			r.calls++
			r.mu.Unlock()
		},
		Count: func(k signertrace.Counter, n int64) {
			r.mu.Lock()
			if r.counts == nil {
				r.counts = make(map[signertrace.Counter]int64)
			}
			r.counts[k] += n
			r.calls++
			if n < 0 {
				r.negative = append(r.negative, k)
			}
			r.mu.Unlock()
		},
	}
}

func (r *recorder) reports() (int, []signertrace.StageInfo, map[signertrace.Counter]int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	counts := make(map[signertrace.Counter]int64, len(r.counts))
	for k, v := range r.counts {
		counts[k] = v
	}
	return r.calls, append([]signertrace.StageInfo(nil), r.stages...), counts
}

func checkTrace(c *checker) {
	s := c.openSigner()
	defer s.Close()
	var rec recorder
	msg := c.message(c.size(128))
	ctx, cancel := c.ctx()
	defer cancel()
	begin := time.Now()
	sig, err := s.SignContext(signertrace.WithTrace(ctx, rec.trace()), msg)
	wall := time.Since(begin)
	if err != nil {
		c.fatalf("traced SignContext: %v", err)
	}
	if err := VerifyStd(s.alg, s.Public(), msg, sig); err != nil {
		c.errorf("traced SignContext: %v", err)
	}
	n, stages, _ := rec.reports()
	if len(stages) == 0 {
		c.errorf("no stage was reported: every sign reports at least its sign, device or transport stage")
	}
	var measured time.Duration
	measuredIn := map[signertrace.Stage]time.Duration{}
	sleptIn := map[signertrace.Stage]time.Duration{}
	core := false
	for _, i := range stages {
		known := false
		for _, st := range signertrace.Stages() {
			known = known || i.Stage == st
		}
		if !known {
			c.errorf("unknown stage %v reported", i.Stage)
		}
		if i.Duration < 0 {
			c.errorf("stage %v reported a negative duration %v", i.Stage, i.Duration)
		}
		switch i.Source {
		case signertrace.Measured:
			measured += i.Duration
			measuredIn[i.Stage] += i.Duration
			if i.Slept || i.Profile != "" || i.Within != 0 {
				c.errorf("measured stage %v carries Slept, Within or a Profile, which only modeled stages have", i.Stage)
			}
		case signertrace.Modeled:
			if i.Profile == "" {
				c.errorf("modeled stage %v names no profile", i.Stage)
			}
			if i.Slept {
				within := i.Within
				if within == 0 {
					within = signertrace.StageTransport
				}
				sleptIn[within] += i.Duration
			} else if i.Within != 0 {
				c.errorf("modeled stage %v was not slept but names a stage it passed Within", i.Stage)
			}
		default:
			c.errorf("stage %v has unknown source %v", i.Stage, i.Source)
		}
		switch i.Stage {
		case signertrace.StageSign, signertrace.StageDevice, signertrace.StageTransport:
			core = true
		}
	}
	if len(stages) > 0 && !core {
		c.errorf("stages %v include none of sign, device, transport", stages)
	}
	if measured > wall {
		c.errorf("measured stages add up to %v, more than the call's wall time %v: stages overlap or are not measured inside the call", measured, wall)
	}
	for st, slept := range sleptIn {
		if slept > measuredIn[st] {
			c.errorf("modeled stages slept %v within %v, more than the measured %v time %v that must contain them", slept, st, st, measuredIn[st])
		}
	}
	rec.mu.Lock()
	negative := rec.negative
	rec.mu.Unlock()
	for _, k := range negative {
		c.errorf("counter %v was given a negative increment: counters only grow", k)
	}
	// A backend must not keep a trace past its call.
	c.signAndVerify(s, c.size(32), "untraced sign")
	if after, _, _ := rec.reports(); after != n {
		c.errorf("the trace of an earlier call got %d reports from a later call without it", after-n)
	}
}
