package threshold

import (
	"context"
	"fmt"
	"time"

	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/threshold/frost"
)

func (s *Signer) sawRTT(m *memberState, d time.Duration) {
	old := m.rttNanos.Load()
	if old == 0 {
		m.rttNanos.Store(int64(d))
		return
	}
	m.rttNanos.Store(old + (int64(d)-old)/8)
	s.mu.Lock()
	m.downUntil = time.Time{}
	m.backoff = 0
	s.mu.Unlock()
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
}

// markBad avoids a party that sent an invalid share for a minute.
func (s *Signer) markBad(m *memberState) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m.downUntil = time.Now().Add(time.Minute)
	m.pool = nil
}

// refiller keeps m's pool topped up until the Signer closes.
func (s *Signer) refiller(m *memberState) {
	defer s.wg.Done()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
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
			Timeouts: m.timeouts.Load(), BadShares: m.badShares.Load()}
		if m.remote != nil {
			ps.Sign, ps.Presign = m.remote.signC.snapshot(), m.remote.preC.snapshot()
		}
		out = append(out, ps)
	}
	return out
}
