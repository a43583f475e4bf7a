package netshape

import (
	"net"
	"time"
)

// flush hands the Out queue to the underlying connection as it falls due.
// It returns when the Conn is closed and the queue delivered or given up,
// or when a write fails.
func (c *Conn) flush() {
	defer close(c.flushed)
	h := &c.out
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	var batch [][]byte
	for {
		h.mu.Lock()
		closing := !h.closeBy.IsZero()
		if h.q.empty() {
			h.mu.Unlock()
			if c.isClosed() {
				return // nothing left to deliver
			}
			select {
			case <-c.kick:
			case <-c.closed:
			}
			continue
		}
		now := time.Now()
		first := h.q.front()
		if closing && first.due.After(h.closeBy) {
			h.q.reset() // due after Linger: dropped
			h.notify()
			h.mu.Unlock()
			return
		}
		if now.Before(first.due) {
			wait := first.due.Sub(now)
			if wait <= fineWait {
				h.mu.Unlock()
				sleep(wait)
				continue
			}
			timer.Reset(wait - fineWait)
			h.mu.Unlock()
			select {
			case <-timer.C:
			case <-c.kick: // Close wants a look at closeBy
			}
			continue
		}
		n := 0
		for !h.q.empty() && len(batch) < 1024 {
			ch := h.q.front()
			if now.Before(ch.due) {
				break
			}
			batch = append(batch, ch.b)
			n += len(ch.b)
			h.q.pop()
		}
		h.mu.Unlock()

		bufs := net.Buffers(batch)
		_, err := bufs.WriteTo(c.c)
		clear(batch)
		batch = batch[:0]

		h.mu.Lock()
		h.q.bytes -= n
		if err != nil {
			h.err = err
			h.q.reset()
		}
		h.notify()
		h.mu.Unlock()
		if err != nil {
			return
		}
	}
}

// drain reads the underlying connection into the In queue, stamping each
// arrival with its due time. It returns when the Conn is closed or the
// underlying connection ends, queuing the end of stream in the latter
// case.
func (c *Conn) drain() {
	defer close(c.drained)
	h := &c.in
	buf := make([]byte, readSize)
	for {
		h.mu.Lock()
		for h.q.bytes >= c.buffer && !c.isClosed() {
			changed := h.wait()
			h.mu.Unlock()
			select {
			case <-changed:
			case <-c.closed:
			}
			h.mu.Lock()
		}
		h.mu.Unlock()
		if c.isClosed() {
			return
		}

		n, err := c.c.Read(buf)
		now := time.Now()
		if n > 0 {
			data := make([]byte, n)
			copy(data, buf[:n])
			h.mu.Lock()
			t := h.enqueue(now, data)
			h.notify()
			h.mu.Unlock()
			c.stats.in.add(n, t)
			if c.link.Counter != nil {
				c.link.Counter.in.add(n, t)
			}
		}
		if err != nil {
			if c.isClosed() {
				return
			}
			// The end of the stream travels the link like the bytes
			// before it (a FIN after its data).
			h.mu.Lock()
			h.q.push(chunk{err: err, due: h.sh.inOrder(now.Add(h.sh.p.Delay))})
			h.notify()
			h.mu.Unlock()
			return
		}
	}
}
