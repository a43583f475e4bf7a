package netshape

import (
	"sync"
	"time"
)

// chunk is a run of bytes due at one time, or, with err set and no bytes,
// the end of the stream.
type chunk struct {
	b   []byte
	due time.Time
	err error
}

// queue is a FIFO of chunks in due order.
type queue struct {
	chunks []chunk
	head   int
	bytes  int // bytes held, and, for Out, bytes being written
}

func (q *queue) empty() bool { return q.head == len(q.chunks) }

func (q *queue) front() *chunk { return &q.chunks[q.head] }

func (q *queue) push(c chunk) { q.chunks = append(q.chunks, c) }

// pop drops the front chunk; its bytes stay counted until the caller
// subtracts them.
func (q *queue) pop() {
	q.chunks[q.head] = chunk{}
	q.head++
	switch {
	case q.head == len(q.chunks):
		q.chunks, q.head = q.chunks[:0], 0
	case q.head >= 256 && 2*q.head >= len(q.chunks):
		n := copy(q.chunks, q.chunks[q.head:])
		clear(q.chunks[n:])
		q.chunks, q.head = q.chunks[:n], 0
	}
}

// reset drops every chunk and the byte count.
func (q *queue) reset() {
	clear(q.chunks)
	q.chunks, q.head, q.bytes = q.chunks[:0], 0, 0
}

// half is one direction of a Conn: its queue, its shaper and a way to wait
// for either to change.
type half struct {
	mu      sync.Mutex
	q       queue
	sh      *shaper
	spans   []span
	changed chan struct{} // closed and cleared by notify; nil while nobody waits
	err     error         // Out only: the underlying connection's write error
	closeBy time.Time     // Out only, once closing: bytes due later are dropped
}

// wait returns a channel closed at the next notify. h.mu must be held.
func (h *half) wait() <-chan struct{} {
	if h.changed == nil {
		h.changed = make(chan struct{})
	}
	return h.changed
}

// notify wakes every waiter. h.mu must be held.
func (h *half) notify() {
	if h.changed != nil {
		close(h.changed)
		h.changed = nil
	}
}

// enqueue schedules data, which entered the direction at now, and queues
// it. h.mu must be held.
func (h *half) enqueue(now time.Time, data []byte) tally {
	var t tally
	h.spans, t = h.sh.plan(now, len(data), h.spans[:0])
	h.q.bytes += len(data)
	for _, s := range h.spans {
		h.q.push(chunk{b: data[:s.n:s.n], due: s.due})
		data = data[s.n:]
	}
	return t
}

// take copies into b the bytes due at now, up to the end of stream, and
// drops them from the queue. h.mu must be held.
func (h *half) take(b []byte, now time.Time) int {
	n := 0
	for n < len(b) && !h.q.empty() {
		ch := h.q.front()
		if ch.err != nil || now.Before(ch.due) {
			break
		}
		k := copy(b[n:], ch.b)
		n += k
		if k == len(ch.b) {
			h.q.pop()
		} else {
			ch.b = ch.b[k:]
		}
	}
	h.q.bytes -= n
	h.notify()
	return n
}
