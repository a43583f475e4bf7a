package threshold

import (
	"cmp"
	"context"
	"crypto"
	"crypto/ed25519"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/signerkit/signerkit/internal/backoff"
	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/signer/signertrace"
	"github.com/signerkit/signerkit/threshold/frost"
)

// Remote is a party the coordinator signs with.
type Remote struct {
	ID   frost.Identifier
	Addr string // host:port, passed to Config.Dial
	// ServerName is the name the party's certificate must carry; empty
	// means the host part of Addr.
	ServerName string
}

// Local is a share the coordinator holds itself (as a horcrux cosigner
// holds one), so that it signs with one remote party per signature.
type Local struct {
	Key    *frost.KeyPackage
	Nonces *frost.NonceStore // opened for Key; not closed by the Signer
}

// Config configures a Signer.
type Config struct {
	// Public is the key's public key package, from the dealer or the DKG.
	// Shares are verified against it.
	Public *frost.PublicKeyPackage
	// Parties are the remote parties; the Signer asks any MinSigners of
	// them (counting Local) for each signature.
	Parties []Remote
	// Local, when set, is a share the Signer holds itself.
	Local *Local
	// TLS is the client configuration: the coordinator's certificate and
	// the pool of the CA that signed the parties' certificates (RootCAs),
	// or a VerifyPeerCertificate or VerifyConnection callback that pins
	// their keys; one of them is required (Go would otherwise trust the
	// system roots), and InsecureSkipVerify is refused without a
	// callback. TLS 1.3 is required whatever it says; with
	// VerifyPeerCertificate, sessions are not resumed (Go does not call it
	// on a resumed session).
	TLS *tls.Config
	// Dial makes the raw connections under TLS; nil means a net.Dialer.
	// A network shaper plugs in here.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// PoolSize is the number of nonce commitments kept ready per party;
	// 0 means 256. The pool is refilled in the background when it falls
	// below half.
	PoolSize int
	// PartyTimeout bounds one request to one party; a party that takes
	// longer is routed around and avoided for a while. 0 means 5 s.
	PartyTimeout time.Duration
	// HedgeAfter is how long a sign waits on a party before it also asks
	// another pair; 0 means adaptive (three times the slowest chosen
	// party's mean round trip, at least 20 ms); negative turns hedging off.
	HedgeAfter time.Duration
	// Log, when set, gets a line naming the party each time one fails a
	// share request and is routed around (at Warn: down, slow, refusing,
	// or sending a share that does not verify) or met a stale nonce pair
	// (at Info). Nil logs nothing. A signer opened through a threshold:
	// URI logs to slog.Default().
	Log *slog.Logger
}

// Signer is the coordinator of a threshold key: a signer.Signer whose
// signatures are made by any MinSigners of the parties, one request and
// response round trip to each of them, in parallel, per signature. It
// keeps a pool of each party's nonce commitments, refilled in the
// background, routes around parties that are down, slow or send bad
// shares, and verifies every signature before returning it.
//
// A Signer is safe for concurrent use.
type Signer struct {
	pub     *frost.PublicKeyPackage
	pubKey  ed25519.PublicKey
	members []*memberState
	t       int
	timeout time.Duration
	hedge   time.Duration
	pool    int
	log     *slog.Logger

	ctx    context.Context // ends at Close
	cancel context.CancelFunc
	wg     sync.WaitGroup // the refillers
	// reqs counts the attempts and their share requests, which outlive
	// the sign that made them (a hedge's loser, a late answer); Close
	// waits for them before it releases the dropped commitments, since a
	// request that Close ends unsent queues its pair for release.
	reqs sync.WaitGroup

	mu      sync.Mutex
	changed chan struct{} // closed and replaced when a pool grows
	// precommit is the last precommit signed and the members whose
	// shares made it: its vote extension goes to them (under mu).
	precommit precommitSigners
	closed    atomic.Bool
	// signs is read-held by each SignContext; Close takes it to wait for
	// them. (A WaitGroup's Add at zero may not race its Wait.)
	signs sync.RWMutex

	// onClose, set by OpenFile, closes what the config file opened (the
	// local share's nonce store) once Close is done.
	onClose func()
}

var (
	_ signer.Signer          = (*Signer)(nil)
	_ signer.AlgorithmSigner = (*Signer)(nil)
)

// memberState is the coordinator's view of one signer: its pool of
// commitments and its health.
type memberState struct {
	id     frost.Identifier
	m      member
	remote *remote // nil for the local share

	// guarded by Signer.mu
	pool      []frost.Presigned
	downUntil time.Time
	retry     backoff.Backoff // the waits of markDown
	refill    chan struct{}
	primed    bool                // a presign has succeeded since New
	dropped   []frost.NonceHandle // commitments not to be used, to release

	// busy holds the handles taken from the pool that are in a sign or
	// release request, so that an answer listing the party's outstanding
	// pairs does not put them back in the pool. It has its own lock (taken
	// inside s.mu, or alone) so a share's answer does not take s.mu.
	busyMu sync.Mutex
	busy   map[frost.NonceHandle]struct{}

	// down is set, with s.mu held, when downUntil or retry is, so that
	// an answer (sawRTT) takes s.mu to clear them only when they are set.
	down                                  atomic.Bool
	rttNanos                              atomic.Int64 // moving average of sign round trips
	shares, failures, badShares, timeouts atomic.Uint64
	released                              atomic.Uint64
	// resync asks the refiller for the party's outstanding pairs: a share
	// request found a pair of the pool used already, so others may be.
	resync atomic.Bool
}

// New returns a Signer for cfg and starts filling its pools. It does not
// wait for the parties: signs wait for commitments (within their context)
// while the pools first fill.
func New(cfg Config) (*Signer, error) {
	if cfg.Public == nil {
		return nil, fmt.Errorf("threshold: Config.Public is nil: %w", signer.ErrInvalidArgument)
	}
	if cfg.TLS == nil && len(cfg.Parties) > 0 {
		return nil, fmt.Errorf("threshold: Config.TLS is nil: %w", signer.ErrInvalidArgument)
	}
	s := &Signer{pub: cfg.Public, pubKey: cfg.Public.GroupPublicKey(), t: cfg.Public.MinSigners(),
		timeout: cfg.PartyTimeout, hedge: cfg.HedgeAfter, pool: cfg.PoolSize, log: cfg.Log, changed: make(chan struct{})}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.timeout <= 0 {
		s.timeout = 5 * time.Second
	}
	if s.pool <= 0 {
		s.pool = 256
	}
	seen := map[frost.Identifier]bool{}
	add := func(id frost.Identifier, m member, r *remote) error {
		if seen[id] || cfg.Public.VerifyingShare(id) == nil {
			return fmt.Errorf("threshold: party %d is repeated or not in the public key package: %w", id, signer.ErrInvalidArgument)
		}
		seen[id] = true
		s.members = append(s.members, &memberState{id: id, m: m, remote: r, refill: make(chan struct{}, 1),
			busy: map[frost.NonceHandle]struct{}{}, retry: backoff.Backoff{Min: minDown, Max: maxDown}})
		return nil
	}
	if cfg.Local != nil {
		if cfg.Local.Key == nil || cfg.Local.Nonces == nil || !slices.Equal(cfg.Local.Key.GroupPublicKey(), s.pubKey) {
			return nil, fmt.Errorf("threshold: Config.Local needs Key (of this group key) and Nonces: %w", signer.ErrInvalidArgument)
		}
		if err := add(cfg.Local.Key.ID(), &local{nonces: cfg.Local.Nonces}, nil); err != nil {
			return nil, err
		}
	}
	dial := cfg.Dial
	if dial == nil {
		dial = (&net.Dialer{}).DialContext
	}
	var base *tls.Config
	if len(cfg.Parties) > 0 {
		var err error
		if base, err = clientTLS(cfg.TLS); err != nil {
			return nil, err
		}
	}
	for _, p := range cfg.Parties {
		conf := base.Clone()
		if p.ServerName != "" {
			conf.ServerName = p.ServerName
		} else if host, _, err := net.SplitHostPort(p.Addr); err == nil {
			conf.ServerName = host
		}
		r := &remote{id: p.ID, addr: p.Addr, tls: conf, dial: dial}
		if err := add(p.ID, r, r); err != nil {
			return nil, err
		}
	}
	if len(s.members) < s.t {
		return nil, fmt.Errorf("threshold: %d signers configured, the threshold is %d: %w", len(s.members), s.t, signer.ErrInvalidArgument)
	}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	for _, m := range s.members {
		s.wg.Add(1)
		go s.refiller(m)
	}
	return s, nil
}

// Public returns the group's Ed25519 public key.
func (s *Signer) Public() crypto.PublicKey { return s.pubKey }

// Algorithm returns signer.Ed25519.
func (s *Signer) Algorithm() signer.Algorithm { return signer.Ed25519 }

// Sign implements crypto.Signer: msg is the whole message and
// opts.HashFunc() must be 0 (Ed25519ph and Ed25519ctx are refused with
// signer.ErrUnsupported). rand is ignored.
func (s *Signer) Sign(_ io.Reader, msg []byte, opts crypto.SignerOpts) ([]byte, error) {
	if opts != nil && opts.HashFunc() != 0 {
		return nil, fmt.Errorf("threshold: Ed25519ph: %w", signer.ErrUnsupported)
	}
	if o, ok := opts.(*ed25519.Options); ok && o.Context != "" {
		return nil, fmt.Errorf("threshold: Ed25519ctx: %w", signer.ErrUnsupported)
	}
	return s.SignContext(context.Background(), msg)
}

// SignContext signs msg with MinSigners parties and returns the verified
// Ed25519 signature. It returns within ctx's deadline with an error
// wrapping ctx.Err() if no pair could sign by then.
func (s *Signer) SignContext(ctx context.Context, msg []byte) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if s.closed.Load() {
		return nil, fmt.Errorf("threshold: %w", signer.ErrClosed)
	}
	if len(msg) > MaxMessage {
		return nil, fmt.Errorf("threshold: %d-byte message, the most is %d: %w", len(msg), MaxMessage, signer.ErrMessageTooLarge)
	}
	s.signs.RLock()
	defer s.signs.RUnlock()
	if s.closed.Load() {
		return nil, fmt.Errorf("threshold: %w", signer.ErrClosed)
	}
	tr := signertrace.ContextTrace(ctx)
	start := tr.Start()
	var tally tally
	sig, err := s.sign(ctx, msg, &tally)
	tr.Measured(signertrace.StageTransport, start)
	tr.Add(signertrace.CountRoundTrips, tally.roundTrips.Load())
	tr.Add(signertrace.CountBytesOut, tally.bytesOut.Load())
	tr.Add(signertrace.CountBytesIn, tally.bytesIn.Load())
	if err != nil && s.closed.Load() && !errors.Is(err, signer.ErrClosed) {
		err = fmt.Errorf("threshold: %w (%v)", signer.ErrClosed, err)
	}
	return sig, err
}

// tally counts one sign's requests and frame bytes for its trace.
type tally struct {
	roundTrips, bytesOut, bytesIn atomic.Int64
}

type attemptResult struct {
	sig     []byte
	set     []*memberState // the members that made sig
	err     error
	culprit *memberState // the member that failed, if one did
	// stale is set when a member found its pair used already
	// (frost.ErrNonceUsed): not its fault, so the sign tries again,
	// with the same member allowed.
	stale bool
}

// sign runs attempts with pairs of signers until one produces a verified
// signature: a second attempt starts when one fails, or when it waits on
// a party longer than the hedge delay.
func (s *Signer) sign(ctx context.Context, msg []byte, tl *tally) ([]byte, error) {
	actx, cancel := context.WithCancel(ctx)
	defer cancel()
	pc, others := s.precommitOf(msg)
	// Every attempt but a hedge starts after a failure that excludes a
	// member, so few are ever made; the cap is a backstop, and results
	// has room for all so that no attempt blocks after sign returns.
	maxAttempts := 2 * len(s.members)
	results := make(chan attemptResult, maxAttempts)
	failed := map[*memberState]bool{}
	running := 0
	var lastErr error
	var pending []*attempt
	// launch starts an attempt without the members that failed this sign
	// and those in also (the slow ones a hedge avoids).
	launch := func(also map[*memberState]bool) (bool, error) {
		if len(pending) == maxAttempts {
			return false, nil
		}
		excluded := maps.Clone(failed)
		maps.Copy(excluded, also)
		// Only a sign with nothing in flight waits for commitments.
		a, err := s.choose(ctx, excluded, running == 0)
		if err != nil || a == nil {
			return false, err
		}
		pending = append(pending, a)
		running++
		// Added under the signs read lock, so before Close's Wait.
		s.reqs.Add(1)
		go func() {
			defer s.reqs.Done()
			results <- s.attempt(actx, a, msg, tl)
		}()
		return true, nil
	}
	// A vote extension goes first to its precommit's members (precommitOf).
	ok, err := launch(others)
	if !ok && err == nil && len(others) > 0 {
		ok, err = launch(nil)
	}
	if !ok {
		if err == nil {
			err = fmt.Errorf("threshold: fewer than %d signers available: %w", s.t, signer.ErrDeviceNotFound)
		}
		return nil, err
	}
	var hedge <-chan time.Time
	if d := s.hedgeDelay(pending[0]); d > 0 {
		hedge = time.After(d)
	}
	for {
		select {
		case r := <-results:
			running--
			if r.err == nil {
				s.signed(pc, r.set)
				return r.sig, nil
			}
			lastErr = r.err
			if final(r.err) {
				return nil, r.err
			}
			if r.culprit != nil {
				failed[r.culprit] = true
			} else if running == 0 && !r.stale {
				if ctx.Err() != nil {
					return nil, fmt.Errorf("threshold: sign: %w (last failure: %v)", ctx.Err(), lastErr)
				}
				return nil, r.err
			}
			if ok, _ := launch(nil); !ok && running == 0 {
				if ctx.Err() != nil {
					return nil, fmt.Errorf("threshold: sign: %w (last failure: %v)", ctx.Err(), lastErr)
				}
				return nil, fmt.Errorf("threshold: no %d signers left to ask: %w", s.t, lastErr)
			}
		case <-hedge:
			hedge = nil
			// Ask another set without the members that have not
			// answered, if there are enough others.
			launch(pending[len(pending)-1].unanswered())
		case <-s.ctx.Done():
			return nil, fmt.Errorf("threshold: %w", signer.ErrClosed)
		case <-ctx.Done():
			if lastErr != nil {
				return nil, fmt.Errorf("threshold: sign: %w (last failure: %v)", ctx.Err(), lastErr)
			}
			return nil, fmt.Errorf("threshold: sign: %w", ctx.Err())
		}
	}
}

func (s *Signer) hedgeDelay(a *attempt) time.Duration {
	if s.hedge != 0 {
		return s.hedge
	}
	var slowest time.Duration
	for _, m := range a.set {
		slowest = max(slowest, time.Duration(m.rttNanos.Load()))
	}
	return adaptiveHedge(slowest)
}

// adaptiveHedge is the hedge delay when none is configured, for a party
// whose mean answer time is d: three times d, at least 20 ms.
func adaptiveHedge(d time.Duration) time.Duration { return max(3*d, 20*time.Millisecond) }

// attempt is one try at a signature with one set of signers, each with
// the commitments taken from its pool.
type attempt struct {
	set      []*memberState
	pres     []frost.Presigned
	answered []atomic.Bool
}

// unanswered returns the members of a.set that have not answered yet.
func (a *attempt) unanswered() map[*memberState]bool {
	slow := map[*memberState]bool{}
	for i, m := range a.set {
		if !a.answered[i].Load() {
			slow[m] = true
		}
	}
	return slow
}

// choose takes one commitment from the pools of t signers that are not
// excluded, preferring those up, local and fast. When too few have
// commitments it waits for the pools to refill, until ctx ends, if wait
// is set. It returns nil when not enough signers are left.
func (s *Signer) choose(ctx context.Context, excluded map[*memberState]bool, wait bool) (*attempt, error) {
	for {
		s.mu.Lock()
		now := time.Now()
		var cands, waiting []*memberState
		for _, m := range s.members {
			if excluded[m] {
				continue
			}
			if len(m.pool) > 0 {
				cands = append(cands, m)
			} else {
				waiting = append(waiting, m)
			}
		}
		if len(cands)+len(waiting) < s.t {
			s.mu.Unlock()
			return nil, nil
		}
		if len(cands) >= s.t {
			slices.SortStableFunc(cands, func(a, b *memberState) int {
				ad, bd := now.Before(a.downUntil), now.Before(b.downUntil)
				switch {
				case ad != bd:
					if ad {
						return 1
					}
					return -1
				case (a.remote == nil) != (b.remote == nil):
					if a.remote == nil {
						return -1
					}
					return 1
				}
				// A member never measured (0) sorts first, so each is
				// tried and measured early.
				return cmp.Compare(a.rttNanos.Load(), b.rttNanos.Load())
			})
			a := &attempt{set: slices.Clone(cands[:s.t]), answered: make([]atomic.Bool, s.t)}
			for _, m := range a.set {
				p := m.pool[len(m.pool)-1]
				a.pres = append(a.pres, p)
				m.pool = m.pool[:len(m.pool)-1]
				m.busyMu.Lock()
				m.busy[p.Handle] = struct{}{}
				m.busyMu.Unlock()
				s.poke(m)
			}
			s.mu.Unlock()
			return a, nil
		}
		for _, m := range waiting {
			s.poke(m)
		}
		changed := s.changed
		s.mu.Unlock()
		if !wait {
			return nil, nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return nil, fmt.Errorf("threshold: waiting for nonce commitments: %w", ctx.Err())
		case <-s.ctx.Done():
			return nil, fmt.Errorf("threshold: %w", signer.ErrClosed)
		}
	}
}

// poke asks m's refiller to top up its pool. s.mu is held.
func (s *Signer) poke(m *memberState) {
	if len(m.pool) < s.pool/2 {
		select {
		case m.refill <- struct{}{}:
		default:
		}
	}
}

// attempt asks each member of a.set for its share, in parallel, with the
// commitments choose took for it, and aggregates them.
func (s *Signer) attempt(ctx context.Context, a *attempt, msg []byte, tl *tally) attemptResult {
	list := make([]frost.SigningCommitments, len(a.set))
	for i, p := range a.pres {
		list[i] = p.Commitments
	}
	frost.SortCommitments(list)
	answers := make(chan shareAnswer, len(a.set))
	// The requests outlive the sign that made them, up to the party
	// timeout (or Close): a late answer still measures its party. A far
	// party that a hedge overtook would otherwise stay unmeasured, sort as
	// the fastest, and be asked, and hedged away, on every sign. They
	// outlive the attempt too, which returns at the first failure: the
	// last request to end ends pctx. Cancelled, a request already sent
	// would have its pair released, and the release may reach the party
	// before the request, which it then refuses as asking for a used pair.
	pctx, cancel := context.WithTimeout(s.ctx, s.timeout)
	var left atomic.Int32
	left.Store(int32(len(a.set)))
	ended := func() {
		if left.Add(-1) == 0 {
			cancel()
		}
	}
	for i := range a.set {
		s.reqs.Add(1) // the attempt's own count is held: never at zero
		go func() {
			defer s.reqs.Done()
			defer ended()
			answers <- s.askShare(pctx, a, i, list, msg, tl)
		}()
	}
	// The binding factors, group commitment and challenge need no shares:
	// computed while the requests travel, they leave the sum of the shares
	// and the signature check for when the last share arrives.
	prep, prepErr := frost.PrepareAggregate(s.pub, msg, list)
	shares := make([]frost.SignatureShare, 0, len(a.set))
	for range a.set {
		an := <-answers
		m := a.set[an.i]
		if an.err != nil {
			if ctx.Err() != nil {
				// The sign ended (or another attempt won): not the
				// party's fault.
				return attemptResult{err: an.err}
			}
			return s.shareFailed(m, an.err)
		}
		m.shares.Add(1)
		shares = append(shares, an.share)
	}
	if ctx.Err() != nil {
		// Another attempt won, or the sign ended: the shares were
		// awaited only to measure the parties.
		return attemptResult{err: ctx.Err()}
	}
	slices.SortFunc(shares, func(x, y frost.SignatureShare) int { return int(x.ID) - int(y.ID) })
	if prepErr != nil {
		return attemptResult{err: prepErr}
	}
	sig, err := prep.Aggregate(shares)
	if err != nil {
		var se *frost.ShareError
		if errors.As(err, &se) {
			for _, m := range a.set {
				if m.id == se.ID {
					m.badShares.Add(1)
					s.markBad(m)
					s.log.Warn("threshold: a party sent a signature share that does not verify; avoided for a minute",
						"party", uint16(m.id), "err", err)
					return attemptResult{err: err, culprit: m}
				}
			}
		}
		return attemptResult{err: err}
	}
	return attemptResult{sig: sig, set: a.set}
}

// shareAnswer is member i's answer to an attempt's share request.
type shareAnswer struct {
	i     int
	share frost.SignatureShare
	err   error
}

// askShare asks member i of a.set for its share of msg, with list the
// attempt's commitments, and measures it.
func (s *Signer) askShare(ctx context.Context, a *attempt, i int, list []frost.SigningCommitments, msg []byte, tl *tally) shareAnswer {
	m := a.set[i]
	start := time.Now()
	if m.remote != nil {
		tl.roundTrips.Add(1)
		tl.bytesOut.Add(int64(frameHeaderSize + 9 + (len(list)-1)*frost.SigningCommitmentsSize + len(msg)))
	}
	sh, err := m.m.share(ctx, a.pres[i].Handle, list, msg)
	if err != nil && !errors.Is(err, frost.ErrNonceUsed) {
		// The pair may still be fresh at the party (the request never
		// reached it, or was refused before the nonce was touched): have
		// it discarded, or its slot stays taken.
		s.releaseLater(m, a.pres[i].Handle)
	}
	m.unbusy(a.pres[i].Handle)
	if err == nil {
		a.answered[i].Store(true)
		if m.remote != nil {
			tl.bytesIn.Add(frameHeaderSize + frost.ScalarSize)
		}
		s.sawRTT(m, time.Since(start))
	}
	return shareAnswer{i, sh, err}
}

// shareFailed is the outcome of an attempt in which m's share request
// failed with err (the sign still running). A pair found used already
// (frost.ErrNonceUsed) is not the party's fault: other pairs of its pool
// may be stale too (the party restarted without them, reclaimed them, or
// handed them to another coordinator too), so the pool is forgotten and
// filled again from the party's list of this coordinator's outstanding
// pairs, and the sign tries again with the party allowed. Any other
// failure makes m the culprit, avoided by this sign and, unless final,
// marked down.
func (s *Signer) shareFailed(m *memberState, err error) attemptResult {
	if errors.Is(err, context.DeadlineExceeded) {
		m.timeouts.Add(1)
		err = fmt.Errorf("threshold: party %d did not answer within %v: %w", m.id, s.timeout, err)
	}
	m.failures.Add(1)
	if errors.Is(err, frost.ErrNonceUsed) {
		s.mu.Lock()
		m.pool = nil
		s.mu.Unlock()
		m.resync.Store(true)
		select {
		case m.refill <- struct{}{}:
		default:
		}
		s.log.Info("threshold: a party found a nonce pair used already; refilling its pool", "party", uint16(m.id))
		return attemptResult{err: err, stale: true}
	}
	if !final(err) {
		s.markDown(m)
	}
	s.log.Warn("threshold: a party failed a share request; routed around", "party", uint16(m.id), "err", err)
	return attemptResult{err: err, culprit: m}
}

// Close stops the refills, waits for signs in flight, which fail with an
// error wrapping signer.ErrClosed, and for a presign already sent to a
// party (within PartyTimeout: the party has made its pairs, and only its
// answer says which to release), asks each party to release the nonce
// pairs of the commitments in its pool or dropped (each within
// PartyTimeout; a party that does not answer reclaims them by age,
// PartyConfig.ReclaimAfter) and closes the connections. It is idempotent.
func (s *Signer) Close() error {
	if s.closed.Swap(true) {
		return nil
	}
	s.cancel()
	s.signs.Lock() // waits for the signs in flight; later ones see closed
	//lint:ignore SA2001 the empty critical section is a barrier: taking the lock is the point
	s.signs.Unlock()
	s.wg.Wait()   // the refillers, and the presigns they sent
	s.reqs.Wait() // the share requests, which end at s.ctx
	var wg sync.WaitGroup
	for _, m := range s.members {
		s.mu.Lock()
		for _, p := range m.pool {
			m.dropped = append(m.dropped, p.Handle)
		}
		m.pool = nil
		s.trimDropped(m)
		n := len(m.dropped)
		s.mu.Unlock()
		if n > 0 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				s.sendReleases(context.Background(), m)
			}()
		}
	}
	wg.Wait()
	for _, m := range s.members {
		m.m.close()
	}
	if s.onClose != nil {
		s.onClose()
	}
	return nil
}
