package threshold

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/signerkit/signerkit/internal/backoff"
	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/threshold/dkls23"
	"github.com/signerkit/signerkit/threshold/frost"
)

// dklsResult is the outcome of one party's try at a sign.
type dklsResult struct {
	m   *dklsMember
	sig []byte
	err error
}

// signDigest signs a 32-byte hash: with a pooled presignature of the
// fastest party up that has one, else with one made there and then; a
// party that fails is marked down and the next one tried. A party that
// has not answered within the hedge delay is not waited out: another is
// asked as well, with a presignature of its own, and the first signature
// is returned (the other request is cancelled; its presignature, used or
// not, never signs again). A party that no longer knows a presignature,
// or whose connection was lost (it restarted, or dropped the
// presignature for room), is not at fault: its pool is dropped and it is
// tried again, once.
func (s *DKLS23Signer) signDigest(ctx context.Context, hash []byte) ([]byte, error) {
	if len(hash) != 32 {
		return nil, fmt.Errorf("threshold: a %d-byte digest, want 32 (SHA-256): %w", len(hash), signer.ErrInvalidArgument)
	}
	if s.closed.Load() {
		return nil, errDKLSClosed
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("threshold: %w", err)
	}
	actx, cancel := context.WithCancel(ctx)
	defer cancel()
	// Each party is asked twice at most (once more after a stale
	// presignature), so no try blocks on results after the sign returns.
	results := make(chan dklsResult, 2*len(s.members))
	errs := map[int]error{}
	stale := map[int]bool{}
	busy := map[int]bool{}
	var hedge <-chan time.Time
	var won atomic.Bool
	hedged := false
	launch := func(upOnly bool) bool {
		m, pre := s.next(errs, busy, upOnly)
		if m == nil {
			return false
		}
		busy[m.id] = true
		if d := s.hedgeDelay(m, pre == nil); len(busy) == 1 && !hedged && d > 0 {
			hedge = time.After(d)
		}
		go func() {
			sig, err := s.signWith(actx, m, pre, hash)
			if err != nil && won.Load() {
				m.overtaken.Add(1) // another party's signature came first
			}
			results <- dklsResult{m, sig, err}
		}()
		return true
	}
	if !launch(false) {
		return nil, &NoSignerError{Errs: errs}
	}
	for {
		var r dklsResult
		select {
		case r = <-results:
		case <-hedge:
			hedge = nil
			if ctx.Err() == nil { // a hedge after the deadline would only spend a presignature
				hedged = true
				launch(true)
			}
			continue
		}
		delete(busy, r.m.id)
		if r.err == nil {
			won.Store(true)
			s.markUp(r.m)
			return r.sig, nil
		}
		switch {
		case s.closed.Load():
			return nil, errDKLSClosed
		case ctx.Err() != nil:
			errs[r.m.id] = r.err
			if len(busy) == 0 {
				return nil, &NoSignerError{Errs: errs, Ctx: ctx.Err()}
			}
			continue
		case (errors.Is(r.err, frost.ErrNonceUsed) || errors.Is(r.err, signer.ErrDisconnected)) && !stale[r.m.id]:
			// The party restarted, or dropped the presignature for room:
			// not its fault. Its pool went with it.
			stale[r.m.id] = true
			s.log.Info("DKLS23 party lost its connection or the presignature (restarted?): its pool is dropped", "party", r.m.id, "err", r.err)
			s.dropPool(r.m)
		default:
			errs[r.m.id] = r.err
			r.m.failures.Add(1)
			if errors.Is(r.err, context.DeadlineExceeded) {
				r.m.timeouts.Add(1)
			}
			s.log.Warn("DKLS23 party failed a sign; routed around", "party", r.m.id, "err", r.err)
			s.markDown(r.m)
		}
		if !launch(false) && len(busy) == 0 {
			return nil, &NoSignerError{Errs: errs}
		}
	}
}

// hedgeDelay is how long a sign waits on m before it asks another party
// too: HedgeAfter when set, else three times m's mean sign round trip
// (and presign time, for a sign that presigns first), at least 20 ms.
// Zero or less turns hedging off.
func (s *DKLS23Signer) hedgeDelay(m *dklsMember, cold bool) time.Duration {
	if s.hedge != 0 {
		return s.hedge
	}
	d := time.Duration(m.rttNanos.Load())
	if cold {
		d += time.Duration(m.preNanos.Load())
	}
	return adaptiveHedge(d)
}

// next picks the party to sign with, among those neither in tried nor
// busy: the up party with a presignature ready (which it takes from the
// pool) that answered fastest, else the fastest up party, else (unless
// upOnly) one marked down (it may be back).
func (s *DKLS23Signer) next(tried map[int]error, busy map[int]bool, upOnly bool) (*dklsMember, *dklsPre) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	var ready, up, down *dklsMember
	faster := func(m, than *dklsMember) bool { return than == nil || m.rttNanos.Load() < than.rttNanos.Load() }
	for _, m := range s.members {
		if _, done := tried[m.id]; done || busy[m.id] {
			continue
		}
		switch {
		case now.Before(m.downUntil):
			if down == nil {
				down = m
			}
		case len(m.pool) > 0:
			if faster(m, ready) {
				ready = m
			}
		case faster(m, up):
			up = m
		}
	}
	switch {
	case ready != nil:
		pre := ready.pool[0]
		ready.pool = ready.pool[1:]
		s.poke(ready)
		return ready, &pre
	case up != nil:
		return up, nil
	case upOnly:
		return nil, nil
	}
	return down, nil
}

func (s *DKLS23Signer) poke(m *dklsMember) {
	select {
	case m.wake <- struct{}{}:
	default:
	}
}

func (s *DKLS23Signer) markDown(m *dklsMember) time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	d := m.retry.Next()
	m.downUntil = time.Now().Add(d)
	m.pool = nil // its presignatures may be lost with it
	return d
}

func (s *DKLS23Signer) markUp(m *dklsMember) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m.downUntil = time.Time{}
	m.retry.Reset()
}

func (s *DKLS23Signer) dropPool(m *dklsMember) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m.pool = nil
	s.poke(m)
}

// signWith signs hash with party m, within PartyTimeout: with pre, or a
// presignature made first when pre is nil. The coordinator's half of the
// presignature is used (or dropped) whatever happens: it never signs
// another message.
func (s *DKLS23Signer) signWith(ctx context.Context, m *dklsMember, pre *dklsPre, hash []byte) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	if pre == nil {
		p, err := s.presignWith(ctx, m, 0)
		if err != nil {
			return nil, err
		}
		pre = &p
	}
	cc, err := m.r.conn(ctx, 0)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	f, err := cc.roundTrip(ctx, typeDKLSSign, append(pre.id[:dklsIDSize:dklsIDSize], hash...))
	if err != nil {
		if took := time.Since(start); ctx.Err() != nil && took > time.Duration(m.rttNanos.Load()) {
			// Cut short (a hedge answered first, or a timeout): the party
			// is as slow as it was waited for, at least, until it answers
			// again, so that the next signs ask the other party first.
			m.rttNanos.Store(int64(took))
		}
		return nil, fmt.Errorf("threshold: DKLS23 party %d: %w", m.id, err)
	}
	average(&m.rttNanos, time.Since(start))
	if err := dklsAnswer(m.id, f, typeDKLSShare); err != nil {
		return nil, err
	}
	theirs, err := dkls23.UnmarshalSignShare(f.body)
	if err == nil && theirs.From != m.id {
		err = fmt.Errorf("a share from party %d", theirs.From)
	}
	if err != nil {
		return nil, &DKLS23PartyError{Party: m.id, Err: err}
	}
	ours, err := pre.ps.Sign(hash)
	if err != nil {
		return nil, err
	}
	sig, err := dkls23.Combine(s.pubKey, hash, []*dkls23.SignShare{ours, theirs})
	if err != nil {
		// Our own share is right: the other is at fault.
		return nil, &DKLS23PartyError{Party: m.id, Err: err}
	}
	m.shares.Add(1)
	r, sv := sig.R(), sig.S()
	rb, sb := r.Bytes(), sv.Bytes()
	return append(rb[:], sb[:]...), nil
}

// dklsAnswer checks an answer's frame type: a party's refusal is its
// *PartyError, any other type a *DKLS23PartyError.
func dklsAnswer(id int, f frame, want byte) error {
	err := responseError(frost.Identifier(id), f, want)
	var pe *PartyError
	if err != nil && !errors.As(err, &pe) {
		return &DKLS23PartyError{Party: id, Err: err}
	}
	return err
}

// presignWith makes a presignature with party m over connection kind (0
// sign, 1 presign): two round trips.
func (s *DKLS23Signer) presignWith(ctx context.Context, m *dklsMember, kind int) (dklsPre, error) {
	start := time.Now()
	var id dklsID
	if _, err := rand.Read(id[:]); err != nil {
		return dklsPre{}, err
	}
	run, out, err := dkls23.NewPresign(s.local, dklsSID(id), []int{s.local.ID, m.id}, rand.Reader)
	if err != nil {
		return dklsPre{}, err
	}
	cc, err := m.r.conn(ctx, kind)
	if err != nil {
		return dklsPre{}, err
	}
	req := append(append(id[:dklsIDSize:dklsIDSize], byte(s.local.ID)), out[m.id]...)
	f, err := cc.roundTrip(ctx, typeDKLSPresign, req)
	if err != nil {
		return dklsPre{}, fmt.Errorf("threshold: DKLS23 party %d: %w", m.id, err)
	}
	if err := dklsAnswer(m.id, f, typeDKLSPresigned); err != nil {
		return dklsPre{}, err
	}
	msg1, msg2, err := parseDKLSPresigned(f.body)
	var out2 map[int][]byte
	var ps *dkls23.Presignature
	if err == nil {
		out2, err = run.Round2(map[int][]byte{m.id: msg1})
	}
	if err == nil {
		ps, err = run.Finish(map[int][]byte{m.id: msg2})
	}
	if err != nil {
		return dklsPre{}, &DKLS23PartyError{Party: m.id, Err: err}
	}
	f, err = cc.roundTrip(ctx, typeDKLSFinish, append(id[:dklsIDSize:dklsIDSize], out2[m.id]...))
	if err != nil {
		return dklsPre{}, fmt.Errorf("threshold: DKLS23 party %d: %w", m.id, err)
	}
	if err := dklsAnswer(m.id, f, typeDKLSFinished); err != nil {
		return dklsPre{}, err
	}
	if len(f.body) != 0 {
		return dklsPre{}, &DKLS23PartyError{Party: m.id, Err: errors.New("a finished answer with a body")}
	}
	average(&m.preNanos, time.Since(start))
	return dklsPre{id: id, ps: ps}, nil
}

// refiller keeps m's pool at PoolSize, one presignature at a time on the
// presign connection, backing off while the party fails.
func (s *DKLS23Signer) refiller(m *dklsMember) {
	defer s.wg.Done()
	for {
		s.mu.Lock()
		need := s.pool - len(m.pool)
		s.mu.Unlock()
		if need <= 0 {
			select {
			case <-m.wake:
				continue
			case <-s.ctx.Done():
				return
			}
		}
		ctx, cancel := context.WithTimeout(s.ctx, s.timeout)
		p, err := s.presignWith(ctx, m, 1)
		cancel()
		if s.ctx.Err() != nil {
			return
		}
		if err != nil {
			s.log.Warn("DKLS23 presign failed", "party", m.id, "err", err)
			if !backoff.Sleep(s.ctx, s.markDown(m)) {
				return
			}
			continue
		}
		s.mu.Lock()
		m.pool = append(m.pool, p)
		m.downUntil = time.Time{}
		m.retry.Reset()
		s.mu.Unlock()
	}
}

// Presign makes n presignatures with party id now, on the presign
// connection, and adds them to its pool; it returns how many it made.
func (s *DKLS23Signer) Presign(ctx context.Context, id, n int) (int, error) {
	for _, m := range s.members {
		if m.id != id {
			continue
		}
		for i := range n {
			if s.closed.Load() {
				return i, errDKLSClosed
			}
			p, err := s.presignWith(ctx, m, 1)
			if err != nil {
				return i, err
			}
			s.mu.Lock()
			m.pool = append(m.pool, p)
			s.mu.Unlock()
		}
		return n, nil
	}
	return 0, fmt.Errorf("threshold: no DKLS23 party %d: %w", id, signer.ErrInvalidArgument)
}
