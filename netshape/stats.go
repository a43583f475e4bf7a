package netshape

import "sync/atomic"

// Count is the traffic of one direction.
type Count struct {
	// Bytes is the payload carried: what was written, for Out, and what
	// arrived from the underlying connection, for In (whether or not the
	// reader has taken it yet).
	Bytes int64
	// Segments is the number of segments of at most MSS bytes the Bytes
	// were cut into, each write or arrival cut on its own.
	Segments int64
	// Retransmits is the number of segment transmissions repeated because
	// of Loss, and RetransmittedBytes their payload: on a real network
	// these cross the wire a second time.
	Retransmits        int64
	RetransmittedBytes int64
}

// WireBytes returns the payload bytes that crossed the emulated wire,
// retransmissions included, and perSegment bytes of headers per segment
// transmission (52 for IPv4 and TCP with timestamps, 0 for payload only).
func (c Count) WireBytes(perSegment int64) int64 {
	return c.Bytes + c.RetransmittedBytes + perSegment*(c.Segments+c.Retransmits)
}

// Stats is the traffic of a connection, or of all the connections a
// Counter counts, in each direction as seen from the wrapped end.
type Stats struct {
	Out, In Count
}

// counts is a Count kept with atomics.
type counts struct {
	bytes, segments, retransmits, retransmitted atomic.Int64
}

func (c *counts) add(n int, t tally) {
	c.bytes.Add(int64(n))
	c.segments.Add(t.segments)
	if t.retransmits > 0 {
		c.retransmits.Add(t.retransmits)
		c.retransmitted.Add(t.retransmitted)
	}
}

func (c *counts) load() Count {
	return Count{
		Bytes:              c.bytes.Load(),
		Segments:           c.segments.Load(),
		Retransmits:        c.retransmits.Load(),
		RetransmittedBytes: c.retransmitted.Load(),
	}
}

// Counter adds up the traffic of the connections made with a Link whose
// Counter field points to it. The zero Counter is ready to use; it is safe
// for concurrent use.
type Counter struct {
	out, in counts
}

// Stats returns the traffic counted so far.
func (c *Counter) Stats() Stats {
	return Stats{Out: c.out.load(), In: c.in.load()}
}
