package daemon

import (
	"context"
	"crypto"
	"crypto/ed25519"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/signerkit/signerkit/guard"
	"github.com/signerkit/signerkit/internal/backoff"
	"github.com/signerkit/signerkit/signbytes"
	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/signer/signertrace"
)

// OpenFunc opens the key a URI names; signer.Open by default.
type OpenFunc func(ctx context.Context, uri string) (signer.Signer, error)

// Reopen backoff bounds.
const (
	minReopenBackoff = 100 * time.Millisecond
	maxReopenBackoff = 30 * time.Second
	openTimeout      = 30 * time.Second
)

// BackendDownError is what a sign gets while the backend is being
// reopened after it went away. It wraps signer.ErrDisconnected.
type BackendDownError struct {
	Backend string
	Cause   error
}

func (e *BackendDownError) Error() string {
	return fmt.Sprintf("signerkit: backend %s is unavailable (reopening with backoff): %v", e.Backend, e.Cause)
}

// Unwrap returns signer.ErrDisconnected.
func (e *BackendDownError) Unwrap() error { return signer.ErrDisconnected }

// backend is the key of one URI, shared by the chains that name it: a
// signer.Signer that times and traces each sign into the metrics, and
// that closes and reopens, with backoff, a device that went away, checking
// that it comes back with the same public key.
type backend struct {
	uri, scheme string
	pub         ed25519.PublicKey
	open        OpenFunc
	log         *slog.Logger
	m           *Metrics

	// mu guards cur and downCause. cur is the one source of truth of the
	// backend's state: nil while down, and a reopen loop runs exactly
	// while it is nil and life has not ended.
	mu        sync.RWMutex
	cur       signer.Signer // nil while down (or closed)
	downCause error         // why cur went away
	// reopenDone counts the reopen loop (at most one runs), for Close.
	reopenDone sync.WaitGroup

	// life ends when the backend closes (kill, under mu), stopping the
	// reopen loop and cutting a probe or a reopening open short.
	life context.Context
	kill context.CancelFunc
	// health is what the last sign or probe said; /readyz probes when it
	// is older than healthInterval, for at most probeTimeout.
	health         healthState
	healthInterval time.Duration
	probeTimeout   time.Duration
	// minBackoff is the first wait before a reopen: minReopenBackoff
	// unless a test sets Options.reopenBackoff.
	minBackoff time.Duration

	phasesMu sync.RWMutex
	phases   map[phaseKey]*phaseMetrics
	upG      prometheus.Gauge
	// inflight marks each vote and proposal sign in flight (inflight.go),
	// when ownState: the device keeps its own double-sign state and may
	// move it for a signature whose answer is then lost.
	inflight *inflight
	ownState bool
}

var (
	_ signer.Signer       = (*backend)(nil)
	_ guard.RequestSigner = (*backend)(nil)
)

// Scheme returns a URI's scheme, the backend label of the metrics (never
// the URI, which may name files or carry a pin-value).
func Scheme(uri string) string {
	s, _, _ := strings.Cut(uri, ":")
	return s
}

func openBackend(ctx context.Context, uri string, open OpenFunc, log *slog.Logger, m *Metrics, healthInterval, probeTimeout time.Duration) (*backend, error) {
	octx, cancel := context.WithTimeout(ctx, openTimeout)
	defer cancel()
	s, err := open(octx, uri)
	if err != nil {
		return nil, fmt.Errorf("open the key %s: %w", RedactURI(uri), err)
	}
	pub, ok := s.Public().(ed25519.PublicKey)
	if !ok || len(pub) != ed25519.PublicKeySize {
		_ = s.Close()
		return nil, notConsensusKey(uri, s.Public()) // keymsg.go
	}
	b := &backend{uri: uri, scheme: Scheme(uri), pub: pub, open: open, log: log.With("backend", Scheme(uri)), m: m,
		cur: s, phases: map[phaseKey]*phaseMetrics{}, upG: m.backendUp.WithLabelValues(Scheme(uri))}
	if k, ok := s.(interface{ KeepsSignState() bool }); ok {
		b.ownState = k.KeepsSignState()
	}
	b.life, b.kill = context.WithCancel(context.Background())
	b.healthInterval, b.probeTimeout = healthInterval, probeTimeout
	b.minBackoff = minReopenBackoff
	b.health.record(nil) // it answered the open
	b.upG.Set(1)
	return b, nil
}

// RedactURI drops a URI's query, where secrets' sources (and, when the
// user wrote one, a pin-value) are: what may be logged or shown of a key's
// URI.
func RedactURI(uri string) string {
	u, _, _ := strings.Cut(uri, "?")
	return u
}

func (b *backend) Public() crypto.PublicKey { return b.pub }

func (b *backend) Sign(_ io.Reader, msg []byte, opts crypto.SignerOpts) ([]byte, error) {
	if opts != nil && opts.HashFunc() != 0 {
		return nil, fmt.Errorf("signerkit: Ed25519 signs the message itself: %w", signer.ErrUnsupported)
	}
	return b.SignContext(context.Background(), msg)
}

type phaseKey struct{ chain, phase string }

// phaseMetrics are one chain and phase's backend metrics, resolved once,
// with the Trace that feeds them (a Trace may serve concurrent calls).
type phaseMetrics struct {
	chain   string
	seconds prometheus.Observer
	trace   signertrace.Trace
	mu      sync.Mutex
	stages  map[stageSource]prometheus.Observer
}

type stageSource struct {
	stage  signertrace.Stage
	source signertrace.Source
}

func (b *backend) phase(chain, phase string) *phaseMetrics {
	k := phaseKey{chain, phase}
	b.phasesMu.RLock()
	pm := b.phases[k]
	b.phasesMu.RUnlock()
	if pm != nil {
		return pm
	}
	b.phasesMu.Lock()
	defer b.phasesMu.Unlock()
	if pm := b.phases[k]; pm != nil {
		return pm
	}
	pm = &phaseMetrics{chain: chain, seconds: b.m.backendSeconds.WithLabelValues(chain, phase, b.scheme), stages: map[stageSource]prometheus.Observer{}}
	pm.trace.StageDone = func(i signertrace.StageInfo) {
		ss := stageSource{i.Stage, i.Source}
		pm.mu.Lock()
		o := pm.stages[ss]
		if o == nil {
			o = b.m.stageSeconds.WithLabelValues(chain, phase, b.scheme, i.Stage.String(), i.Source.String())
			pm.stages[ss] = o
		}
		pm.mu.Unlock()
		o.Observe(i.Duration.Seconds())
	}
	b.phases[k] = pm
	return pm
}

// SignGuarded signs r through the current device, reporting its stages
// to the metrics under r's chain and phase: the Guard calls it (it is a
// guard.RequestSigner) once its rules allow r. A vote extension is filed
// under its precommit, as the node asks for both in one request.
func (b *backend) SignGuarded(ctx context.Context, r *guard.Request) ([]byte, error) {
	m := r.Message()
	pm := b.phase(m.ChainID, m.Phase.Vote().String())
	// The guard's state write after the sign is filed with its stages.
	r.ReportTo(&pm.trace)
	// An extension moves no device state: the guard signs one only with
	// its precommit (SignWithExtension) or right after it, and the
	// precommit's own sign is the one marked.
	return b.sign(ctx, pm, r.SignBytes(), m.Phase != signbytes.VoteExtension)
}

// SignContext signs msg through the current device, filed under no chain
// and the context's label (signertrace.WithLabel): signs that do not come
// through a Guard, which none of the daemon's do.
func (b *backend) SignContext(ctx context.Context, msg []byte) ([]byte, error) {
	return b.sign(ctx, b.phase("", signertrace.LabelFrom(ctx)), msg, true)
}

// sign signs msg, filed under pm, marking it in flight (inflight.go) when
// mark is set and the device keeps a double-sign state of its own.
func (b *backend) sign(ctx context.Context, pm *phaseMetrics, msg []byte, mark bool) ([]byte, error) {
	b.mu.RLock()
	s := b.cur
	b.mu.RUnlock()
	if s == nil {
		err := &BackendDownError{Backend: b.scheme, Cause: signer.ErrDisconnected}
		b.m.backendErrors.WithLabelValues(b.scheme, "disconnected").Inc()
		return nil, err
	}
	b.health.signStarted()
	var fl *markerSlot
	if mark && b.ownState {
		fl = b.inflight.begin(pm.chain, msg)
	}
	start := time.Now()
	sig, err := s.SignContext(signertrace.WithTrace(ctx, &pm.trace), msg)
	pm.seconds.Observe(time.Since(start).Seconds())
	b.inflight.end(fl, err)
	b.health.signDone(err)
	if err != nil {
		b.m.backendErrors.WithLabelValues(b.scheme, Cause(err)).Inc()
		if deviceGone(err) {
			b.down(s, err)
		}
		return nil, err
	}
	return sig, nil
}

// deviceGone reports an error after which the signer must be opened again.
func deviceGone(err error) bool {
	return errors.Is(err, signer.ErrDisconnected) || errors.Is(err, signer.ErrDeviceNotFound) ||
		errors.Is(err, signer.ErrClosed) || errors.Is(err, signer.ErrAppNotOpen)
}

// current returns the current signer, nil while the backend is down, and
// why it went down.
func (b *backend) current() (signer.Signer, error) {
	b.mu.RLock()
	defer b.mu.RUnlock()
	return b.cur, b.downCause
}

// down closes s, if it is still the current signer, and starts reopening.
// Concurrent downs of the same signer start one reopen loop: only the
// first finds s current; the others, and any down while cur is nil (while
// the loop runs), return.
func (b *backend) down(s signer.Signer, cause error) {
	b.mu.Lock()
	if s == nil || b.cur != s || b.life.Err() != nil {
		b.mu.Unlock()
		return
	}
	b.cur = nil
	b.downCause = cause
	b.upG.Set(0)
	b.reopenDone.Add(1)
	go b.reopen()
	b.mu.Unlock()
	_ = s.Close()
	b.log.Error("backend went away; reopening with backoff", "cause", Cause(cause), "err", cause)
}

func (b *backend) reopen() {
	defer b.reopenDone.Done()
	wait := backoff.Backoff{Min: b.minBackoff, Max: maxReopenBackoff, Jitter: 0.5}
	for attempt := 1; ; attempt++ {
		if !wait.Sleep(b.life) {
			return
		}
		ctx, cancel := context.WithTimeout(b.life, openTimeout)
		s, result, err := b.tryOpen(ctx)
		cancel()
		if err != nil {
			b.m.backendReopens.WithLabelValues(b.scheme, result).Inc()
			if result == "wrong_key" {
				b.log.Error("the reopened device has another key; not signing with it", "attempt", attempt)
			} else {
				b.log.Warn("backend reopen failed", "attempt", attempt, "result", result, "cause", Cause(err), "err", err, "next_in", wait.Current())
			}
			continue
		}
		b.mu.Lock()
		if b.life.Err() != nil {
			b.mu.Unlock()
			_ = s.Close()
			return
		}
		// Under mu, so that a down right after (which may start the next
		// loop while this one logs) finds it all done.
		b.health.record(nil)
		b.upG.Set(1)
		b.cur = s
		b.downCause = nil
		b.mu.Unlock()
		b.m.backendReopens.WithLabelValues(b.scheme, "ok").Inc()
		b.log.Info("backend is back", "attempt", attempt)
		return
	}
}

// tryOpen opens the key again and checks that it is the same key and that
// its device answers a health check (signer.HealthChecker, for backends
// that have one): only then is the device back. result is the
// backend_reopens_total result of a failure.
func (b *backend) tryOpen(ctx context.Context) (_ signer.Signer, result string, _ error) {
	s, err := b.open(ctx, b.uri)
	if err != nil {
		return nil, "error", err
	}
	if pub, ok := s.Public().(ed25519.PublicKey); !ok || !pub.Equal(b.pub) {
		_ = s.Close()
		return nil, "wrong_key", fmt.Errorf("signerkit: the reopened key is not ed25519:%x", []byte(b.pub))
	}
	if _, err := signer.CheckHealth(ctx, s); err != nil {
		_ = s.Close()
		return nil, "unhealthy", err
	}
	return s, "", nil
}

// Close stops reopening and closes the device.
func (b *backend) Close() error {
	b.mu.Lock()
	b.kill() // under mu: down starts no loop after this
	b.mu.Unlock()
	b.reopenDone.Wait()
	b.mu.Lock()
	s := b.cur
	b.cur = nil
	b.mu.Unlock()
	if s != nil {
		return s.Close()
	}
	return nil
}
