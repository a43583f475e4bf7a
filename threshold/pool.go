package threshold

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/threshold/frost"
)

// sawRTT records an answer from m that took d: it updates m's round-trip
// average and clears m's back-off. It runs for every share received, so
// it takes no lock unless m is marked down (a failure since its last
// answer), which is rare.
func (s *Signer) sawRTT(m *memberState, d time.Duration) {
	average(&m.rttNanos, d)
	if m.down.Load() {
		s.mu.Lock()
		m.downUntil = time.Time{}
		m.retry.Reset()
		m.down.Store(false)
		s.mu.Unlock()
	}
}

// A member that failed is the last choice for minDown, doubled on each
// failure in a row up to maxDown.
const (
	minDown = 100 * time.Millisecond
	maxDown = 10 * time.Second
)

// markDown makes m the last choice for a while, doubling the time on
// each failure from minDown up to maxDown. Its pool is kept: a party keeps
// its nonces across restarts, and a commitment it no longer knows costs
// one failed request.
func (s *Signer) markDown(m *memberState) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m.downUntil = time.Now().Add(m.retry.Next())
	m.down.Store(true)
}

// markBad avoids a party that sent an invalid share for a minute. Its
// pool is dropped, and released.
func (s *Signer) markBad(m *memberState) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m.downUntil = time.Now().Add(time.Minute)
	m.down.Store(true)
	for _, p := range m.pool {
		m.dropped = append(m.dropped, p.Handle)
	}
	m.pool = nil
	s.trimDropped(m)
}

// maxDropped bounds the handles waiting to be released to one party; past
// it the oldest are forgotten (the party reclaims them by age).
const maxDropped = 4 * maxPresignBatch

func (s *Signer) trimDropped(m *memberState) {
	if n := len(m.dropped) - maxDropped; n > 0 {
		m.dropped = slices.Delete(m.dropped, 0, n)
	}
}

// releaseLater queues h, a commitment of m's that will not be used, to be
// released to m by its refiller, so the party's slot is freed.
func (s *Signer) releaseLater(m *memberState, h frost.NonceHandle) {
	s.mu.Lock()
	m.dropped = append(m.dropped, h)
	s.trimDropped(m)
	s.mu.Unlock()
	select {
	case m.refill <- struct{}{}:
	default:
	}
}

// sendReleases releases m's dropped handles, a batch at a time, until none
// are left or a request fails (they are then kept for the next try).
func (s *Signer) sendReleases(ctx context.Context, m *memberState) error {
	for {
		s.mu.Lock()
		n := min(len(m.dropped), maxPresignBatch)
		hs := slices.Clone(m.dropped[:n])
		m.dropped = m.dropped[n:]
		m.busyMu.Lock()
		for _, h := range hs {
			m.busy[h] = struct{}{}
		}
		m.busyMu.Unlock()
		s.mu.Unlock()
		if n == 0 {
			return nil
		}
		rctx, cancel := context.WithTimeout(ctx, s.timeout)
		err := m.m.release(rctx, hs)
		cancel()
		if err != nil {
			s.mu.Lock()
			m.dropped = append(hs, m.dropped...)
			s.trimDropped(m)
			s.mu.Unlock()
			m.unbusy(hs...)
			return err
		}
		m.unbusy(hs...)
		m.released.Add(uint64(n))
	}
}

// unbusy ends the requests with hs (see memberState.busy).
func (m *memberState) unbusy(hs ...frost.NonceHandle) {
	m.busyMu.Lock()
	for _, h := range hs {
		delete(m.busy, h)
	}
	m.busyMu.Unlock()
}

// minPresignBatch is the smallest batch the refiller shrinks to after
// presigns that time out.
const minPresignBatch = 16

// heldLocked returns the handles of m's the coordinator holds: in the
// pool, in a sign or release request, or waiting to be released. s.mu is
// held.
func (s *Signer) heldLocked(m *memberState) map[frost.NonceHandle]bool {
	m.busyMu.Lock()
	defer m.busyMu.Unlock()
	held := make(map[frost.NonceHandle]bool, len(m.pool)+len(m.dropped)+len(m.busy))
	for _, p := range m.pool {
		held[p.Handle] = true
	}
	for _, h := range m.dropped {
		held[h] = true
	}
	for h := range m.busy {
		held[h] = true
	}
	return held
}

// addPresigned adds ps, an answer of m's to a presign, to m's pool,
// skipping the handles the coordinator already holds, so that no
// commitment is handed out twice. It returns how many it added.
//
// sent is nil unless the request asked for the outstanding pairs; it then
// holds the handles the coordinator held when the request was sent
// (heldLocked). Those are skipped too: one used by a sign since, after the
// party listed it, must not come back. Such an answer lists every fresh
// pair the party holds (it releases those beyond one answer), so the
// handles of sent still in the pool and missing from ps are no longer
// usable: they leave the pool and are released, in case.
func (s *Signer) addPresigned(m *memberState, ps []frost.Presigned, sent map[frost.NonceHandle]bool) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if sent != nil {
		answered := make(map[frost.NonceHandle]bool, len(ps))
		for _, p := range ps {
			answered[p.Handle] = true
		}
		m.pool = slices.DeleteFunc(m.pool, func(p frost.Presigned) bool {
			if sent[p.Handle] && !answered[p.Handle] {
				m.dropped = append(m.dropped, p.Handle)
				return true
			}
			return false
		})
		s.trimDropped(m)
	}
	held := s.heldLocked(m)
	added := 0
	for _, p := range ps {
		if held[p.Handle] || sent[p.Handle] {
			continue
		}
		held[p.Handle] = true
		m.pool = append(m.pool, p)
		added++
	}
	if added > 0 {
		close(s.changed)
		s.changed = make(chan struct{})
	}
	return added
}

// refiller keeps m's pool topped up until the Signer closes. A refill
// starts when the pool falls below half (or before the first answer) and
// runs until the pool is full, a batch per request. The first request,
// and the next after any failure, asks the party for its outstanding
// pairs too: those of a request that timed out (made by the party, never
// received) come back instead of filling its store. A request that times
// out halves the batch, down to minPresignBatch, so that a slow party
// still answers within the timeout; a quick answer (under a quarter of
// the timeout) doubles it again, up to maxPresignBatch.
func (s *Signer) refiller(m *memberState) {
	defer s.wg.Done()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	batch := maxPresignBatch
	outstanding := true // ask for the outstanding pairs too
	filling := false
	for {
		s.mu.Lock()
		dropped := len(m.dropped) > 0 && !time.Now().Before(m.downUntil)
		s.mu.Unlock()
		if dropped {
			s.sendReleases(s.ctx, m)
			if s.ctx.Err() != nil {
				return
			}
		}
		resync := m.resync.Swap(false)
		outstanding = outstanding || resync
		s.mu.Lock()
		need := s.pool - len(m.pool)
		wait := time.Until(m.downUntil)
		primed := m.primed
		var sent map[frost.NonceHandle]bool
		if outstanding {
			sent = s.heldLocked(m)
		}
		s.mu.Unlock()
		filling = filling || need >= s.pool/2 || !primed || resync
		if filling && (need > 0 || resync) {
			if wait > 0 {
				select {
				case <-time.After(wait):
				case <-s.ctx.Done():
					return
				}
			}
			ask := min(max(need, 1), batch)
			start := time.Now()
			ps, err := s.presign(m, ask, outstanding)
			took := time.Since(start)
			if err != nil && s.ctx.Err() != nil {
				return
			}
			if err != nil {
				s.markDown(m)
				outstanding = true
				if errors.Is(err, context.DeadlineExceeded) {
					batch = max(ask/2, minPresignBatch)
				}
				continue
			}
			if !outstanding && took < s.timeout/4 {
				batch = min(2*batch, maxPresignBatch)
			}
			outstanding = false
			// Added even when Close has begun: it releases the pool
			// after the refillers end.
			s.addPresigned(m, ps, sent)
			if s.ctx.Err() != nil {
				return
			}
			s.mu.Lock()
			m.primed = true
			s.mu.Unlock()
			if !primed && m.remote != nil {
				// Open the sign connection now, so that the first sign
				// does not pay for its TLS handshake.
				ctx, cancel := context.WithTimeout(s.ctx, s.timeout)
				m.remote.conn(ctx, 0)
				cancel()
			}
			if len(ps) > 0 {
				continue
			}
		}
		filling = false
		select {
		case <-m.refill:
		case <-tick.C:
		case <-s.ctx.Done():
			return
		}
	}
}

// presign asks m for n commitments, within PartyTimeout, for the
// refiller. Close ends it while it connects, but not once the request is
// sent: the party makes the pairs whether or not its answer is read, and
// an answer dropped would leave them fresh in its store, known to no
// coordinator, until a coordinator asks for its outstanding pairs or it
// reclaims them by age (never, with a negative ReclaimAfter). So the
// answer is awaited, within the timeout, and Close releases its pairs.
func (s *Signer) presign(m *memberState, n int, outstanding bool) ([]frost.Presigned, error) {
	ctx, cancel := context.WithTimeout(s.ctx, s.timeout)
	defer cancel()
	if m.remote != nil {
		if _, err := m.remote.conn(ctx, 1); err != nil {
			return nil, err
		}
	}
	// A request is written even under an ended context: none is sent
	// once Close has begun.
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	// The connection is open (remote.presign redials, within the
	// timeout, only if it broke since): nothing but the answer is left
	// to wait for.
	deadline, _ := ctx.Deadline()
	actx, acancel := context.WithDeadline(context.WithoutCancel(s.ctx), deadline)
	defer acancel()
	return m.m.presign(actx, n, outstanding)
}

// Presign asks party id for n nonce commitments now and adds them to its
// pool, returning how many it got; for measuring presigning throughput.
func (s *Signer) Presign(ctx context.Context, id frost.Identifier, n int) (int, error) {
	for _, m := range s.members {
		if m.id != id {
			continue
		}
		ps, err := m.m.presign(ctx, n, false)
		if err != nil {
			return 0, err
		}
		s.addPresigned(m, ps, nil)
		return len(ps), nil
	}
	return 0, fmt.Errorf("threshold: no party %d: %w", id, signer.ErrInvalidArgument)
}

// PartyStats describes one signer as the coordinator sees it.
type PartyStats struct {
	ID     frost.Identifier
	Local  bool // the coordinator's own share
	Up     bool // not being avoided after a failure
	Pool   int  // commitments ready
	RTT    time.Duration
	Shares uint64 // valid shares received
	// Released counts the party's fresh nonce pairs the coordinator had
	// it discard (commitments dropped unused); Dropped is how many wait
	// to be released.
	Released uint64
	Dropped  int
	// Failures counts failed requests (Timeouts of them timed out);
	// BadShares counts shares that did not verify.
	Failures, Timeouts, BadShares uint64
	// Sign counts the sign connection's bytes (online signing only);
	// Presign the presign connection's. Both include TLS handshakes.
	Sign, Presign Counters
}

// Stats returns each signer's state and counters.
func (s *Signer) Stats() []PartyStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	out := make([]PartyStats, 0, len(s.members))
	for _, m := range s.members {
		ps := PartyStats{ID: m.id, Local: m.remote == nil, Up: !now.Before(m.downUntil), Pool: len(m.pool),
			RTT: time.Duration(m.rttNanos.Load()), Shares: m.shares.Load(), Failures: m.failures.Load(),
			Timeouts: m.timeouts.Load(), BadShares: m.badShares.Load(),
			Released: m.released.Load(), Dropped: len(m.dropped)}
		if m.remote != nil {
			ps.Sign, ps.Presign = m.remote.signC.snapshot(), m.remote.preC.snapshot()
		}
		out = append(out, ps)
	}
	return out
}
