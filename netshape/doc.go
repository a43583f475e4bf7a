// Package netshape shapes real network connections for tests and
// benchmarks: it adds one-way delay, jitter, a bandwidth cap and loss to a
// net.Conn, so that parties talking over loopback behave as if they were a
// zone, a continent or an ocean apart.
//
// Wrap shapes one connection; Dialer and NewListener shape every
// connection a client dials or a server accepts; a Profile names hosts and
// gives the Link between any two of them. SameZone, CrossEurope,
// Transatlantic and Trio are profiles whose round trip times come from
// published cloud measurements, cited on each.
//
// # The model
//
// A Link holds two Paths: Out for what the wrapped end writes, In for what
// it reads. Shape each connection at one end only; the other end then
// sees an ordinary socket. Each direction is a FIFO of segments of at most
// MSS bytes, each with the time it falls due:
//
//	due = max(previous due, sent + Delay + U[0, Jitter] + retransmissions)
//	sent = max(entered, previous sent) + size/Bandwidth
//
// where entered is when Write queued the bytes (Out) or when they arrived
// from the underlying connection (In). Nothing is delivered before it is
// due, so Delay is a lower bound: with 20 ms each way an echo's round
// trip takes at least 40 ms. Jitter is uniform and never negative, and a
// segment never overtakes an earlier one, as on a TCP stream.
//
// Loss cannot drop bytes from a reliable stream, so it is modelled as TCP
// recovers from it: a lost segment arrives one retransmission timeout
// late (by default the RTT plus MinRTO, 200 ms, as Linux computes its RTO
// for a steady RTT, at most MaxRTO, a minute), each further loss of the
// same segment doubling the timeout, and the segments behind it wait for
// it. Every byte written is
// read, in order; Stats counts the retransmissions. Fast retransmit and
// tail-loss probes, which recover sooner, are not modelled; set
// Path.Retransmit to model them.
//
// Retransmissions do not occupy the bandwidth cap again, and segment
// headers do not count against it: Bandwidth is payload bytes per second.
// Count.WireBytes adds headers when reporting.
//
// A Dialer waits one RTT after connecting, for TCP's handshake. The end of
// the stream (the peer's close) travels In like data: Read returns io.EOF
// once the bytes before it are read and In.Delay has passed.
//
// # Goroutines, deadlines and Close
//
// Each Conn runs two goroutines: one hands the Out queue to the
// underlying connection as it falls due, using one timer, and one reads
// the underlying connection into the In queue. There is no goroutine per
// write, so many requests in flight on one Conn cost only their bytes.
//
// Deadlines keep net.Conn's meaning: a Read or Write past its deadline
// returns an error wrapping os.ErrDeadlineExceeded whose Timeout method
// reports true, and a Read whose bytes are not yet due times out like one
// whose bytes have not arrived. Close returns pending Reads and Writes at
// once with net.ErrClosed; it then lets the bytes already written fall due
// and be delivered (within Linger), closes the underlying connection and
// returns once both goroutines have ended, so a closed Conn leaves no
// goroutine behind. A Conn passes golang.org/x/net/nettest.TestConn.
//
// A Conn, a Listener, a Counter and a DialFunc are safe for concurrent
// use.
//
// # Timing
//
// Times come from the real clock, and nothing is delivered early. Lateness
// is the host's: Go's timers on Linux wake about a millisecond late for
// short waits, so a wait's last two milliseconds are slept in nanosleep(2),
// which wakes within tens of microseconds on an idle machine; on a loaded
// one, deliveries are late by however long the scheduler takes. So tests
// of shaped connections should assert lower bounds and byte counts, never
// upper bounds on time, and benchmarks should report measured round trips
// beside the configured ones, as this package's BenchmarkRTT does.
package netshape
