package daemon

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strings"
	"time"

	"github.com/signerkit/signerkit/guard"
	"github.com/signerkit/signerkit/inprocess"
	"github.com/signerkit/signerkit/signer"
)

// Options are what a program embedding the daemon may change.
type Options struct {
	// Logger receives the structured logs; nil discards them.
	Logger *slog.Logger
	// Open opens a key URI; nil means signer.Open (blank-import the
	// backends the config names).
	Open OpenFunc
	// Version is reported by signerkit_build_info.
	Version string
	// MetricsListener, when set, serves /metrics, /healthz and /readyz
	// instead of a listener on Config.MetricsAddr.
	MetricsListener net.Listener
	// StateFS, when set, holds the double-sign state instead of
	// Config.StateDir (guard.Config.FS): benchmarks and tests use a
	// guard.MemFS. The key bindings then are not kept (the last signature
	// in the state is still checked against the key).
	StateFS guard.FS
	// HealthInterval is how long a backend's last answer, to a sign or a
	// probe, stands for its health in /readyz before the device is
	// probed again; zero means DefaultHealthInterval.
	HealthInterval time.Duration

	// reopenBackoff, which only the package's tests set, is the first
	// wait before reopening a backend that went away; zero means
	// minReopenBackoff.
	reopenBackoff time.Duration
}

// New checks cfg, opens the identity key and every validator key, checks
// each chain's double-sign state and the key it is bound to, and makes
// the endpoints. It fails closed, with an error that says how to fix the
// config or the state. Nothing is served until Run.
func New(ctx context.Context, cfg *Config, opts Options) (_ *Daemon, err error) {
	parsed, err := cfg.check(false)
	if err != nil {
		return nil, err
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	open := opts.Open
	if open == nil {
		open = signer.Open
	}
	d := &Daemon{cfg: cfg, log: log, m: newMetrics(opts.Version), keys: map[string]*backend{}, gs: map[string]*guard.Guard{}, stateFS: opts.StateFS}
	defer func() {
		if err != nil {
			d.close()
		}
	}()
	if opts.StateFS == nil {
		// Before any key is opened: a second daemon on this state must
		// not take the device from the first (statedir.go).
		if d.lock, err = LockStateDir(cfg.StateDir); err != nil {
			return nil, err
		}
		warnStateDir(log, cfg.StateDir)
	}
	if cfg.IdentityKey != "" {
		if err := d.openIdentity(ctx); err != nil {
			return nil, err
		}
	}
	if err := d.openSharedState(); err != nil {
		return nil, err
	}
	if err := d.openKeys(ctx, open, opts); err != nil {
		return nil, err
	}
	for _, ch := range cfg.Chains {
		if err := d.checkState(ctx, ch); err != nil {
			return nil, err
		}
	}
	d.openInflight(ctx, opts.StateFS != nil)
	for i, ch := range cfg.Chains {
		for j, vc := range ch.Validators {
			v, err := d.newValidator(ch, vc, parsed[i][j])
			if err != nil {
				return nil, err
			}
			d.vals = append(d.vals, v)
		}
	}
	d.zeroCounters()
	if opts.MetricsListener != nil {
		d.httpLn = opts.MetricsListener
	} else if cfg.MetricsAddr != "" {
		if d.httpLn, err = net.Listen("tcp", cfg.MetricsAddr); err != nil {
			return nil, fmt.Errorf("signerkit: metrics_addr: %w", err)
		}
	}
	return d, nil
}

// openIdentity opens identity_key, the Ed25519 key of the signer's
// SecretConnections, warning when other users can read it.
func (d *Daemon) openIdentity(ctx context.Context) error {
	file := d.cfg.IdentityKey
	id, err := inprocess.Open(ctx, inprocess.Config{File: file})
	if err != nil {
		return fmt.Errorf("signerkit: identity_key: %w (`signerkit init` writes one)", err)
	}
	d.id = id
	if fi, err := os.Stat(file); err == nil && fi.Mode().Perm()&0o077 != 0 {
		d.log.Warn("identity_key is readable by other users; chmod 600 it", "file", file, "mode", fi.Mode().Perm().String())
	}
	if _, ok := id.Public().(ed25519.PublicKey); !ok {
		return fmt.Errorf("signerkit: identity_key %s is not an Ed25519 key: SecretConnection identities are Ed25519", file)
	}
	return nil
}

// openKeys opens each chain's key once, however many chains share it,
// and puts a guard over it for those chains. A key's health probe gets
// the shortest sign_timeout of its chains.
func (d *Daemon) openKeys(ctx context.Context, open OpenFunc, opts Options) error {
	chainsOf := map[string][]string{}
	probeTimeout := map[string]time.Duration{} // the shortest sign_timeout of the key's chains
	for _, ch := range d.cfg.Chains {
		chainsOf[ch.Key] = append(chainsOf[ch.Key], ch.ID)
		st := ch.SignTimeout
		if st <= 0 {
			st = DefaultSignTimeout
		}
		if cur, ok := probeTimeout[ch.Key]; !ok || st < cur {
			probeTimeout[ch.Key] = st
		}
	}
	healthInterval := opts.HealthInterval
	if healthInterval <= 0 {
		healthInterval = DefaultHealthInterval
	}
	for _, ch := range d.cfg.Chains {
		if _, ok := d.keys[ch.Key]; ok {
			continue
		}
		b, err := openBackend(ctx, ch.Key, open, d.log, d.m, healthInterval, probeTimeout[ch.Key])
		if err != nil {
			return fmt.Errorf("signerkit: chain %q: %w", ch.ID, err)
		}
		if opts.reopenBackoff > 0 {
			b.minBackoff = opts.reopenBackoff
		}
		d.keys[ch.Key] = b
		g, err := guard.New(b, guard.Config{Dir: d.cfg.StateDir, FS: opts.StateFS, Store: d.guardStore(), ChainIDs: chainsOf[ch.Key],
			WriteAhead: writesAhead(ch.Key)})
		if err != nil {
			_ = b.Close()
			delete(d.keys, ch.Key)
			return fmt.Errorf("signerkit: %w", err)
		}
		d.gs[ch.Key] = g
	}
	return nil
}

// checkState refuses a chain without state, and a key other than the one
// its state was made with. A shared state that etcd cannot give now (a
// *guard.StoreError within the chain's sign_timeout) is checked later,
// before the chain's first signature (sharedStore.Load): the daemon starts
// and refuses the chain's signs meanwhile.
func (d *Daemon) checkState(ctx context.Context, ch ChainConfig) error {
	g := d.gs[ch.Key]
	if d.shared != nil {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, signTimeoutOf(ch))
		defer cancel()
	}
	st, err := g.State(ctx, ch.ID)
	if d.shared != nil && errors.As(err, new(*guard.StoreError)) {
		d.shared.checkLater(ch.ID, func(st guard.State) error { return d.adoptState(ch, st) })
		d.log.Warn("shared double-sign state unavailable at start: starting, refusing this chain's signs until etcd answers and the state is checked",
			"chain", ch.ID, "state", d.shared.Name(), "err", err)
		return nil
	}
	if errors.Is(err, guard.ErrNoState) {
		return fmt.Errorf("signerkit: chain %q has no double-sign state in %s; refusing to start from nothing. "+
			"Run `signerkit state init -config %s -chain %s -height H`, H being one more than the last height any earlier signer of this key may have signed (1 for a new chain)",
			ch.ID, d.cfg.StateDir, d.configPath(), ch.ID)
	}
	if errors.As(err, new(*guard.CorruptError)) {
		d.stateDamaged(ch, err)
		return nil
	}
	if err != nil {
		return fmt.Errorf("signerkit: chain %q: %w", ch.ID, err)
	}
	return d.adoptState(ch, st)
}

// adoptState checks that ch's key made the last signature in its state
// st, binds the chain to the key in state_dir, and shows st's height in
// the metrics.
func (d *Daemon) adoptState(ch ChainConfig, st guard.State) error {
	pub := d.keys[ch.Key].pub
	if st.Signature != nil && !ed25519.Verify(pub, st.SignBytes, st.Signature) {
		return fmt.Errorf("signerkit: chain %q: the key %s (public key ed25519:%x) did not make the last signature in the state: "+
			"the state belongs to another key. Point key at the validator's key, or, if the validator's key really changed, move %s away and run `signerkit state init`",
			ch.ID, RedactURI(ch.Key), []byte(pub), d.cfg.StateDir)
	}
	if d.stateFS == nil {
		if d.bindings == nil {
			kb, err := readKeyBindings(d.cfg.StateDir)
			if err != nil {
				return fmt.Errorf("signerkit: chain %q: %w", ch.ID, err)
			}
			d.bindings = kb
		}
		if err := d.bindings.bind(ch.ID, pub); err != nil {
			return fmt.Errorf("signerkit: chain %q: %w", ch.ID, err)
		}
	}
	d.setLast(ch.ID, st)
	d.m.stateDamaged.WithLabelValues(ch.ID).Set(0)
	return nil
}

func (d *Daemon) configPath() string { return d.cfg.PathOrDefault() }

func (d *Daemon) setLast(chain string, st guard.State) {
	d.m.lastHeight.WithLabelValues(chain).Set(float64(st.Height))
	d.m.lastRound.WithLabelValues(chain).Set(float64(st.Round))
	d.m.lastStep.WithLabelValues(chain).Set(float64(st.Step))
}

// writesAhead reports whether a key signs by a round trip to other hosts
// (a threshold group, whose parties each keep their own durable state):
// its guard records a vote while the key signs it rather than after
// (guard.Config.WriteAhead), so that a sign costs the round trip or the
// state sync, whichever is longer, not both.
func writesAhead(keyURI string) bool { return strings.HasPrefix(keyURI, "threshold:") }
