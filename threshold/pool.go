package threshold

import (
	"context"
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
	for {
		old := m.rttNanos.Load()
		v := int64(d)
		if old != 0 {
			v = old + (v-old)/8
		}
		if m.rttNanos.CompareAndSwap(old, v) {
			break
		}
	}
	if m.down.Load() {
		s.mu.Lock()
		m.downUntil = time.Time{}
		m.backoff = 0
		m.down.Store(false)
		s.mu.Unlock()
	}
}

// markDown makes m the last choice for a while, doubling the time on
// each failure from 100 ms up to 10 s. Its pool is kept: a party keeps
// its nonces across restarts, and a commitment it no longer knows costs
// one failed request.
func (s *Signer) markDown(m *memberState) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m.backoff = min(max(2*m.backoff, 100*time.Millisecond), 10*time.Second)
	m.downUntil = time.Now().Add(m.backoff)
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
			return err
		}
		m.released.Add(uint64(n))
	}
}

// refiller keeps m's pool topped up until the Signer closes.
func (s *Signer) refiller(m *memberState) {
	defer s.wg.Done()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
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
		s.mu.Lock()
		need := s.pool - len(m.pool)
		wait := time.Until(m.downUntil)
		primed := m.primed
		s.mu.Unlock()
		if need >= s.pool/2 || need > 0 && !primed {
			if wait > 0 {
				select {
				case <-time.After(wait):
				case <-s.ctx.Done():
					return
				}
			}
			ctx, cancel := context.WithTimeout(s.ctx, s.timeout)
			ps, err := m.m.presign(ctx, need, !primed)
			cancel()
			if s.ctx.Err() != nil {
				return
			}
			if err != nil {
				s.markDown(m)
				continue
			}
			s.mu.Lock()
			m.primed = true
			m.pool = append(m.pool, ps...)
			close(s.changed)
			s.changed = make(chan struct{})
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
		select {
		case <-m.refill:
		case <-tick.C:
		case <-s.ctx.Done():
			return
		}
	}
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
		s.mu.Lock()
		m.pool = append(m.pool, ps...)
		close(s.changed)
		s.changed = make(chan struct{})
		s.mu.Unlock()
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
