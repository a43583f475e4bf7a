package daemon

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/signerkit/signerkit/guard"
	"github.com/signerkit/signerkit/guard/etcdstore"
)

// sharedReadyTimeout bounds /readyz's read of the shared state.
const sharedReadyTimeout = time.Second

// sharedMetrics are the metrics of the shared state (Config.State).
type sharedMetrics struct {
	up      prometheus.Gauge
	errs    *prometheus.CounterVec   // op
	seconds *prometheus.HistogramVec // op
}

func newSharedMetrics() *sharedMetrics {
	return &sharedMetrics{
		up: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: "signerkit", Name: "shared_state_up",
			Help: "With state = \"etcd://…\": 1 while the last read or write of the shared double-sign state (or /readyz's probe of it) succeeded, 0 while etcd is unreachable or without quorum and every sign is refused. Always 0 without a shared state."}),
		errs: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "signerkit", Name: "shared_state_errors_total",
			Help: "Reads (load) and compare-and-swap writes (swap) of the shared double-sign state that failed (etcd unreachable, no quorum, past the sign's deadline); each refused the sign. A swap lost to another signer is not an error."}, []string{"op"}),
		seconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: "signerkit", Name: "shared_state_duration_seconds",
			Help: "Time of a read (load) or compare-and-swap transaction (swap) of the shared double-sign state, tries on several members included (measured).", Buckets: latencyBuckets}, []string{"op"}),
	}
}

func (s *sharedMetrics) collectors() []prometheus.Collector {
	return []prometheus.Collector{s.up, s.errs, s.seconds}
}

// sharedStore is the etcd store of Config.State with its metrics.
type sharedStore struct {
	*etcdstore.Store
	m *sharedMetrics

	mu sync.Mutex
	// later holds the chains whose state could not be read when the
	// daemon started, each with its start check (Daemon.adoptState), run
	// on the first state Load gives: until it passes, Load fails and the
	// guard refuses the chain's signs.
	later map[string]func(guard.State) error
}

// checkLater defers chainID's start check to its first Load.
func (s *sharedStore) checkLater(chainID string, check func(guard.State) error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.later == nil {
		s.later = map[string]func(guard.State) error{}
	}
	s.later[chainID] = check
}

// settle runs chainID's deferred start check, if any, on st.
func (s *sharedStore) settle(chainID string, st guard.State) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	check := s.later[chainID]
	if check == nil {
		return nil
	}
	if err := check(st); err != nil {
		return err
	}
	delete(s.later, chainID)
	return nil
}

// unchecked reports whether chainID's start check is still to run.
func (s *sharedStore) unchecked(chainID string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.later[chainID] != nil
}

// signTimeoutOf is ch's sign_timeout, its default applied: the bound of
// its state's read at start.
func signTimeoutOf(ch ChainConfig) time.Duration {
	if ch.SignTimeout > 0 {
		return ch.SignTimeout
	}
	return DefaultSignTimeout
}

// openSharedState opens cfg.State, when set, and zeroes its metrics. It
// does not contact etcd: a cluster that does not answer at start defers
// the chains' state checks (checkState) to their first read.
func (d *Daemon) openSharedState() error {
	if d.cfg.State == "" {
		return nil
	}
	st, err := openShared(d.cfg)
	if err != nil {
		return err
	}
	d.shared = &sharedStore{Store: st, m: d.m.shared}
	for _, op := range []string{"load", "swap"} {
		d.m.shared.errs.WithLabelValues(op)
	}
	d.log.Info("double-sign state shared in etcd", "state", st.Name())
	return nil
}

// guardStore returns the guard.Store of the chains' state, nil for the
// state files.
func (d *Daemon) guardStore() guard.Store {
	if d.shared == nil {
		return nil
	}
	return d.shared
}

func (s *sharedStore) observe(op string, start time.Time, err error) {
	s.m.seconds.WithLabelValues(op).Observe(time.Since(start).Seconds())
	if err != nil && !errors.Is(err, guard.ErrNoState) && !errors.As(err, new(*guard.ConflictError)) && !errors.As(err, new(*guard.CorruptError)) {
		s.m.errs.WithLabelValues(op).Inc()
		s.m.up.Set(0)
		return
	}
	s.m.up.Set(1)
}

// Load is etcdstore.Store.Load, measured, and the chain's deferred start
// check (checkLater) when it has one: a state that fails it is not given
// to the guard.
func (s *sharedStore) Load(ctx context.Context, chainID string) (guard.State, uint64, error) {
	start := time.Now()
	st, v, err := s.Store.Load(ctx, chainID)
	s.observe("load", start, err)
	if err == nil && v != 0 {
		if err := s.settle(chainID, st); err != nil {
			return guard.State{}, 0, err
		}
	}
	return st, v, err
}

// Swap is etcdstore.Store.Swap, measured.
func (s *sharedStore) Swap(ctx context.Context, chainID string, prev uint64, next guard.State) (uint64, error) {
	start := time.Now()
	v, err := s.Store.Swap(ctx, chainID, prev, next)
	s.observe("swap", start, err)
	return v, err
}

// sharedReady reads the first chain's shared state (a linearizable read,
// which needs a quorum) for /readyz.
func (d *Daemon) sharedReady(ctx context.Context) (bool, string) {
	if d.shared == nil || len(d.cfg.Chains) == 0 {
		return true, ""
	}
	ctx, cancel := context.WithTimeout(ctx, sharedReadyTimeout)
	defer cancel()
	start := time.Now()
	err := d.shared.Ready(ctx, d.cfg.Chains[0].ID)
	d.shared.observe("load", start, err)
	if err != nil {
		return false, fmt.Sprintf("shared double-sign state %s unavailable: %v", d.shared.Name(), err)
	}
	for _, ch := range d.cfg.Chains {
		if !d.shared.unchecked(ch.ID) {
			continue
		}
		// A read through the guard runs the start check (Load).
		if _, err := d.gs[ch.Key].State(ctx, ch.ID); err != nil || d.shared.unchecked(ch.ID) {
			return false, fmt.Sprintf("chain %s: shared double-sign state %s not checked since the start: %v", ch.ID, d.shared.Name(), err)
		}
	}
	return true, ""
}

// openShared opens cfg.State for a state command.
func openShared(cfg *Config) (*etcdstore.Store, error) {
	sc, err := etcdstore.ParseURL(cfg.State)
	if err != nil {
		return nil, fmt.Errorf("signerkit: state: %w", err)
	}
	st, err := etcdstore.New(sc)
	if err != nil {
		return nil, fmt.Errorf("signerkit: state: %w", err)
	}
	return st, nil
}

// ImportStateOf is ImportState on cfg's state: the shared state when
// cfg.State is set, else the state directory.
func ImportStateOf(ctx context.Context, cfg *Config, st guard.State) error {
	if cfg.State == "" {
		return ImportState(ctx, cfg.StateDir, st)
	}
	s, err := openShared(cfg)
	if err != nil {
		return err
	}
	defer s.Close()
	return importState(ctx, guard.Config{Store: s}, st)
}

// RepairStateOf is RepairState on cfg's state directory; a shared state
// has no repair: a damaged value is replaced with `state init` above the
// last height signed.
func RepairStateOf(ctx context.Context, cfg *Config, chainID string, h int64) (string, error) {
	if cfg.State != "" {
		return "", fmt.Errorf("signerkit: state repair works on state files; the state of chain %q is in %s: "+
			"run `signerkit state init` at one more than the last height the validator signed, as the chain shows it", chainID, RedactURI(cfg.State))
	}
	return RepairState(ctx, cfg.StateDir, chainID, h)
}

// InitStateOf is InitState on cfg's state: the shared state when
// cfg.State is set (any one signer host runs it, once), else the state
// directory.
func InitStateOf(ctx context.Context, cfg *Config, chainID string, h int64) error {
	if cfg.State == "" {
		return InitState(ctx, cfg.StateDir, chainID, h)
	}
	st, err := openShared(cfg)
	if err != nil {
		return err
	}
	defer st.Close()
	return initState(ctx, guard.Config{Store: st}, chainID, h)
}

// showShared is ShowState for a shared state: each chain's state read
// from etcd.
func showShared(ctx context.Context, cfg *Config) ([]ChainState, bool, error) {
	st, err := openShared(cfg)
	if err != nil {
		return nil, false, err
	}
	defer st.Close()
	g, err := guard.New(noKey{}, guard.Config{Store: st})
	if err != nil {
		return nil, false, err
	}
	defer g.Close()
	var states []ChainState
	for _, ch := range cfg.Chains {
		s, err := g.State(ctx, ch.ID)
		if err != nil && !errors.Is(err, guard.ErrNoState) && !errors.As(err, new(*guard.CorruptError)) {
			return nil, false, fmt.Errorf("signerkit: chain %q: %w", ch.ID, err)
		}
		cs := ChainState{State: s, Err: err}
		cs.ChainID = ch.ID
		states = append(states, cs)
	}
	return states, false, nil
}
