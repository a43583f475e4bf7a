package netshape

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"time"
)

// ErrInvalidLink is wrapped by the error returned for a Link or Path whose
// values make no sense: a negative delay, jitter, bandwidth, segment size
// or buffer, a delay, jitter or retransmission timeout above its maximum
// (MaxDelay, MaxJitter, MaxRTO), or a loss rate outside [0, 1).
var ErrInvalidLink = errors.New("netshape: invalid link")

const (
	// DefaultMSS is the segment size used when Link.MSS is zero: a
	// 1500-byte Ethernet MTU less the IPv4 and TCP headers and the TCP
	// timestamp option (20 + 20 + 12 bytes).
	DefaultMSS = 1448

	// DefaultBuffer is the per-direction buffer used when Link.Buffer is
	// zero, the size of Linux's largest default TCP send buffer
	// (net.ipv4.tcp_wmem).
	DefaultBuffer = 4 << 20

	// MinRTO is the retransmission timeout's floor over the round trip
	// time: Linux computes RTO as SRTT plus at least 200 ms
	// (TCP_RTO_MIN), so a lost segment costs about RTT + 200 ms.
	MinRTO = 200 * time.Millisecond

	// MaxDelay is the largest Path.Delay: a day, beyond any network's
	// (a test may model a link that never delivers in time with an hour).
	MaxDelay = 24 * time.Hour

	// MaxJitter is the largest Path.Jitter.
	MaxJitter = time.Minute

	// MaxRTO is the largest retransmission timeout: the largest
	// Path.Retransmit, and the cap on the default one (RFC 6298 section
	// 2.5 lets an RTO be capped at 60 s or more). A segment's doubled
	// timeouts, at most maxRetransmits of them, then add up to at most
	// MaxRTO·(2^16 − 1), about 45 days: with MaxDelay and MaxJitter, far
	// inside a time.Duration.
	MaxRTO = time.Minute

	// maxRetransmits bounds the draws for one segment; with Loss < 1 more
	// are vanishingly rare, and the doubled timeouts already hours.
	maxRetransmits = 16
)

// Path shapes one direction of traffic. The zero Path passes bytes on at
// once.
type Path struct {
	// Delay is the one-way propagation delay: no byte is delivered sooner
	// than Delay after it was written. At most MaxDelay.
	Delay time.Duration

	// Jitter adds to each segment's delay a sample drawn uniformly from
	// [0, Jitter]. Jitter never shortens Delay, so Delay stays a lower
	// bound. Delivery stays in order: a segment whose sample would let it
	// overtake an earlier one waits for that one (head-of-line blocking,
	// as on a TCP stream). At most MaxJitter.
	Jitter time.Duration

	// Bandwidth caps the direction at this many payload bytes per second;
	// zero means no cap. Each segment occupies the link for
	// size/Bandwidth (its serialization delay) after the segments queued
	// before it, so a burst queues behind itself.
	Bandwidth int64

	// Loss is the probability, in [0, 1), that a segment is lost. A
	// stream cannot drop bytes, so a lost segment is delivered late, as
	// TCP's retransmission delivers it: after one retransmission timeout
	// more, and each further loss of the same segment (with the same
	// probability) doubles the timeout (RFC 6298 section 5.5). Later
	// segments wait behind it.
	Loss float64

	// Retransmit is the retransmission timeout a lost segment costs, at
	// most MaxRTO. Zero means the link's round trip time (both
	// directions' Delay) plus MinRTO, Linux's RTO for a steady round trip
	// time, or MaxRTO if that is less.
	Retransmit time.Duration
}

// validate checks p; name says which direction in the error.
func (p Path) validate(name string) error {
	switch {
	case p.Delay < 0:
		return fmt.Errorf("%w: %s.Delay %v is negative", ErrInvalidLink, name, p.Delay)
	case p.Jitter < 0:
		return fmt.Errorf("%w: %s.Jitter %v is negative", ErrInvalidLink, name, p.Jitter)
	case p.Bandwidth < 0:
		return fmt.Errorf("%w: %s.Bandwidth %d is negative", ErrInvalidLink, name, p.Bandwidth)
	case !(p.Loss >= 0 && p.Loss < 1): // also refuses NaN
		return fmt.Errorf("%w: %s.Loss %v is not in [0, 1)", ErrInvalidLink, name, p.Loss)
	case p.Retransmit < 0:
		return fmt.Errorf("%w: %s.Retransmit %v is negative", ErrInvalidLink, name, p.Retransmit)
	case p.Delay > MaxDelay:
		return fmt.Errorf("%w: %s.Delay %v is above MaxDelay (%v)", ErrInvalidLink, name, p.Delay, MaxDelay)
	case p.Jitter > MaxJitter:
		return fmt.Errorf("%w: %s.Jitter %v is above MaxJitter (%v)", ErrInvalidLink, name, p.Jitter, MaxJitter)
	case p.Retransmit > MaxRTO:
		return fmt.Errorf("%w: %s.Retransmit %v is above MaxRTO (%v)", ErrInvalidLink, name, p.Retransmit, MaxRTO)
	}
	return nil
}

// Link shapes a connection at the end that wraps it: Out is the direction
// it writes, In the direction it reads. The zero Link shapes nothing.
type Link struct {
	Out, In Path

	// MSS is the segment size, in bytes, that serialization, jitter and
	// loss apply to; zero means DefaultMSS. A write is cut into segments
	// of at most MSS bytes.
	MSS int

	// Buffer bounds the bytes queued in each direction; zero means
	// DefaultBuffer. Out's queue holds written bytes until they are due
	// (the send buffer and the bytes in flight, together), so a Write
	// blocks while it is full. In's queue holds bytes read from the
	// underlying connection until they are due; while it is full the
	// peer's writes back up, as with a closed TCP window.
	Buffer int

	// Seed seeds the random draws of jitter and loss, so that a run can
	// be repeated; zero means a random seed.
	Seed uint64

	// Counter, if not nil, adds up the traffic of every Conn made with
	// this Link (Conn.Stats counts one Conn's).
	Counter *Counter
}

// RTT returns the link's round trip time without jitter, loss or queuing:
// Out.Delay + In.Delay.
func (l Link) RTT() time.Duration { return l.Out.Delay + l.In.Delay }

// Reverse returns the link as seen from the other end: Out and In swapped.
func (l Link) Reverse() Link {
	l.Out, l.In = l.In, l.Out
	return l
}

// Validate returns an error wrapping ErrInvalidLink if a value of l is out
// of range.
func (l Link) Validate() error {
	if err := l.Out.validate("Out"); err != nil {
		return err
	}
	if err := l.In.validate("In"); err != nil {
		return err
	}
	if l.MSS < 0 {
		return fmt.Errorf("%w: MSS %d is negative", ErrInvalidLink, l.MSS)
	}
	if l.Buffer < 0 {
		return fmt.Errorf("%w: Buffer %d is negative", ErrInvalidLink, l.Buffer)
	}
	return nil
}

func (l Link) mss() int {
	if l.MSS == 0 {
		return DefaultMSS
	}
	return l.MSS
}

func (l Link) buffer() int {
	if l.Buffer == 0 {
		return DefaultBuffer
	}
	return l.Buffer
}

// shaper turns the bytes entering one direction into delivery times. It is
// not safe for concurrent use; its half's mutex guards it.
type shaper struct {
	p   Path
	mss int
	rto time.Duration
	rng *rand.Rand // nil when p has neither jitter nor loss

	free time.Time // when the link has finished serializing what it holds
	last time.Time // the latest due time handed out: delivery is in order

}

func newShaper(p Path, l Link, seed uint64) *shaper {
	s := &shaper{p: p, mss: l.mss(), rto: p.Retransmit}
	if s.rto == 0 {
		s.rto = min(l.RTT()+MinRTO, MaxRTO)
	}
	if p.Jitter > 0 || p.Loss > 0 {
		s.rng = rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	}
	return s
}

// span is a run of bytes that become due together.
type span struct {
	n   int
	due time.Time
}

// tally counts what plan did, for Stats.
type tally struct {
	segments, retransmits, retransmitted int64
}

// plan schedules n bytes entering the direction at now. It appends to
// spans one entry per run of consecutive segments that share a due time
// and returns the grown slice.
func (s *shaper) plan(now time.Time, n int, spans []span) ([]span, tally) {
	var t tally
	t.segments = int64((n + s.mss - 1) / s.mss)
	if s.p.Bandwidth == 0 && s.rng == nil {
		// Every segment is due at once: one span.
		return append(spans, span{n, s.inOrder(now.Add(s.p.Delay))}), t
	}
	for off := 0; off < n; off += s.mss {
		size := min(s.mss, n-off)
		sent := now
		if s.p.Bandwidth > 0 {
			start := now
			if s.free.After(start) {
				start = s.free
			}
			sent = start.Add(serialization(size, s.p.Bandwidth))
			s.free = sent
		}
		delay := s.p.Delay
		if s.p.Jitter > 0 {
			delay += time.Duration(s.rng.Int64N(int64(s.p.Jitter) + 1))
		}
		if s.p.Loss > 0 {
			rto := s.rto
			for k := 0; k < maxRetransmits && s.rng.Float64() < s.p.Loss; k++ {
				delay += rto
				rto *= 2
				t.retransmits++
				t.retransmitted += int64(size)
			}
		}
		due := s.inOrder(sent.Add(delay))
		if k := len(spans) - 1; k >= 0 && off > 0 && spans[k].due.Equal(due) {
			spans[k].n += size
		} else {
			spans = append(spans, span{size, due})
		}
	}
	return spans, t
}

// inOrder returns due, or the last due time handed out if that is later,
// and records it.
func (s *shaper) inOrder(due time.Time) time.Time {
	if due.Before(s.last) {
		due = s.last
	}
	s.last = due
	return due
}

// serialization returns how long size bytes occupy a link of bw bytes per
// second, rounded up to the nanosecond.
func serialization(size int, bw int64) time.Duration {
	return time.Duration(math.Ceil(float64(size) * float64(time.Second) / float64(bw)))
}
