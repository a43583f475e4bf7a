package daemon

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/signerkit/signerkit/guard"
	"github.com/signerkit/signerkit/inprocess"
	"github.com/signerkit/signerkit/privval"
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

// Daemon is a running signer: the keys of its config, each behind a
// guard.Guard, served to every validator of every chain, with metrics.
// New checks everything and opens the keys; Run serves until its context
// ends and then stops gracefully.
type Daemon struct {
	cfg  *Config
	log  *slog.Logger
	m    *Metrics
	id   *inprocess.Signer // nil when no validator is on TCP
	keys map[string]*backend
	gs   map[string]*guard.Guard // by key URI
	vals []*validator

	httpLn  net.Listener
	httpSrv *http.Server
	stateFS guard.FS
	// bindings is state_dir's KeysFile, read at the first chain's check.
	bindings *keyBindings
	inflight *inflight  // the backends' in-flight markers (inflight.go)
	lock     *StateLock // state_dir's lock, held from New to Close
	// damaged holds the chains whose state file is damaged: they refuse
	// every sign and /readyz says so (statedir.go).
	damaged map[string]error

	closeOnce sync.Once
}

// validator is one [[chain.validator]] being served.
type validator struct {
	chain, addr      string
	network, address string
	protocol         string
	auth             atomic.Pointer[peerAuth] // TCP only; SIGHUP replaces it
	ep               *privval.Endpoint
	srv              *privval.Server
	ln               net.Listener
	conns            atomic.Int64 // open connections past their handshake
	admit            *admission   // tm2-remote listeners: caps, tarpit (limit.go)
	refusedLog       logLimit     // refused identities: a log line a second
}

// peerAuth is a TCP validator's SecretConnection handshake with its
// allowlist, made once and again on each reload, not per connection.
type peerAuth struct {
	allow []ed25519.PublicKey // nil: any
	h     privval.Handshake
}

// New checks cfg, opens the identity key and every validator key, checks
// each chain's double-sign state and the key it is bound to, and makes
// the endpoints. It fails closed, with an error that says how to fix the
// config or the state. Nothing is served until Run.
func New(ctx context.Context, cfg *Config, opts Options) (_ *Daemon, err error) {
	parsed, err := cfg.check()
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
		id, err := inprocess.Open(ctx, inprocess.Config{File: cfg.IdentityKey})
		if err != nil {
			return nil, fmt.Errorf("signerkit: identity_key: %w (`signerkit init` writes one)", err)
		}
		d.id = id
		if fi, err := os.Stat(cfg.IdentityKey); err == nil && fi.Mode().Perm()&0o077 != 0 {
			log.Warn("identity_key is readable by other users; chmod 600 it", "file", cfg.IdentityKey, "mode", fi.Mode().Perm().String())
		}
		if _, ok := id.Public().(ed25519.PublicKey); !ok {
			return nil, fmt.Errorf("signerkit: identity_key %s is not an Ed25519 key: SecretConnection identities are Ed25519", cfg.IdentityKey)
		}
	}
	chainsOf := map[string][]string{}
	probeTimeout := map[string]time.Duration{} // the shortest sign_timeout of the key's chains
	for _, ch := range cfg.Chains {
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
	for _, ch := range cfg.Chains {
		if _, ok := d.keys[ch.Key]; ok {
			continue
		}
		b, err := openBackend(ctx, ch.Key, open, log, d.m, healthInterval, probeTimeout[ch.Key])
		if err != nil {
			return nil, fmt.Errorf("signerkit: chain %q: %w", ch.ID, err)
		}
		if opts.reopenBackoff > 0 {
			b.minBackoff = opts.reopenBackoff
		}
		d.keys[ch.Key] = b
		g, err := guard.New(b, guard.Config{Dir: cfg.StateDir, FS: opts.StateFS, ChainIDs: chainsOf[ch.Key]})
		if err != nil {
			_ = b.Close()
			delete(d.keys, ch.Key)
			return nil, fmt.Errorf("signerkit: %w", err)
		}
		d.gs[ch.Key] = g
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
	if opts.MetricsListener != nil {
		d.httpLn = opts.MetricsListener
	} else if cfg.MetricsAddr != "" {
		if d.httpLn, err = net.Listen("tcp", cfg.MetricsAddr); err != nil {
			return nil, fmt.Errorf("signerkit: metrics_addr: %w", err)
		}
	}
	return d, nil
}

// checkState refuses a chain without state, and a key other than the one
// its state was made with.
func (d *Daemon) checkState(ctx context.Context, ch ChainConfig) error {
	g := d.gs[ch.Key]
	st, err := g.State(ctx, ch.ID)
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
	pub := d.keys[ch.Key].pub
	if st.Signature != nil && !ed25519.Verify(pub, st.SignBytes, st.Signature) {
		return fmt.Errorf("signerkit: chain %q: the key %s (public key %X) did not make the last signature in the state: "+
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

func (d *Daemon) configPath() string {
	if d.cfg.Path != "" {
		return d.cfg.Path
	}
	return "signerkit.toml"
}

func (d *Daemon) setLast(chain string, st guard.State) {
	d.m.lastHeight.WithLabelValues(chain).Set(float64(st.Height))
	d.m.lastRound.WithLabelValues(chain).Set(float64(st.Round))
	d.m.lastStep.WithLabelValues(chain).Set(float64(st.Step))
}

func (d *Daemon) newValidator(ch ChainConfig, vc ValidatorConfig, pv parsedValidator) (*validator, error) {
	network, address := pv.network, pv.address
	v := &validator{chain: ch.ID, addr: vc.Addr, network: network, address: address, protocol: ch.Protocol}
	if network == "tcp" {
		v.auth.Store(d.peerAuth(v, pv.allow))
	}
	backend := d.keys[ch.Key]
	g := d.gs[ch.Key]
	obs := d.m.observers(ch.ID, backend.scheme)
	log := d.log.With("chain", ch.ID, "validator", vc.Addr)
	connected := d.m.connected.WithLabelValues(ch.ID, vc.Addr)
	lastH, lastR, lastS := d.m.lastHeight.WithLabelValues(ch.ID), d.m.lastRound.WithLabelValues(ch.ID), d.m.lastStep.WithLabelValues(ch.ID)
	connects := d.m.connects.WithLabelValues(ch.ID, vc.Addr)
	onRequest := func(info privval.RequestInfo) {
		o := obs[info.Label]
		if o == nil {
			o = obs[privval.LabelSign]
		}
		o.seconds.Observe(info.Duration.Seconds())
		switch {
		case info.Err == nil && info.Cached:
			o.cached.Inc()
		case info.Err == nil:
			o.signed.Inc()
			if info.Label == "proposal" || info.Label == "prevote" || info.Label == "precommit" {
				// The guard has just made this the chain's state.
				lastH.Set(float64(info.Height))
				lastR.Set(float64(info.Round))
				lastS.Set(float64(stepOf(info.Label)))
			}
		case isDoubleSign(info.Err):
			o.refused.Inc()
			o.dsr.Inc()
			log.Warn("double sign refused", "phase", info.Label, "height", info.Height, "round", info.Round, "err", info.Err)
		default:
			o.refused.Inc()
			log.Warn("request refused", "phase", info.Label, "height", info.Height, "round", info.Round, "err", info.Err)
		}
		if log.Enabled(context.Background(), slog.LevelDebug) {
			log.Debug("request", "phase", info.Label, "height", info.Height, "round", info.Round, "duration", info.Duration, "cached", info.Cached)
		}
	}
	onConnect := func(peer ed25519.PublicKey) {
		v.conns.Add(1)
		connected.Set(float64(v.conns.Load()))
		connects.Inc()
		log.Info("validator connected", "peer", peerString(peer))
	}
	onDisconnect := func(err error) {
		reason := disconnectReason(err)
		var he *handshakeError
		if !errors.As(err, &he) && reason != "dial" {
			if n := v.conns.Add(-1); n >= 0 {
				connected.Set(float64(n))
			} else {
				v.conns.Store(0)
			}
		}
		d.m.disconnects.WithLabelValues(ch.ID, vc.Addr, reason).Inc()
		var ue *privval.UnauthorizedPeerError
		if errors.As(err, &ue) {
			// A refused gno node redials at once and for ever: a line a
			// second at most (validator_disconnects_total counts them all).
			if ok, quiet := v.refusedLog.allow(); ok {
				log.Warn("validator refused: its identity key is not on the allowlist", "peer", peerString(ue.Key), "fix", "add it to allow and send SIGHUP",
					"unlogged_since_last", quiet)
			}
		} else if reason != "shutdown" && reason != "shed" { // shed: counted, not logged (a flood)
			log.Info("validator connection ended", "reason", reason, "err", err)
		}
	}
	hs := d.handshake(v, network)
	switch ch.Protocol {
	case ProtocolTM2Remote:
		v.admit = d.newAdmission(ch.ID, vc.Addr, network, log)
		s, err := privval.NewServer(g, privval.ServerConfig{Handshake: hs, ChainID: ch.ID, RequestTimeout: ch.SignTimeout,
			OnRequest: onRequest, OnConnect: onConnect, OnDisconnect: onDisconnect,
			Admit: v.admit.accept, OnAcceptError: v.admit.acceptError, Shed: v.admit.shed})
		if err != nil {
			return nil, fmt.Errorf("signerkit: chain %q: %w", ch.ID, err)
		}
		v.srv = s
		var ln net.Listener
		if network == "unix" {
			ln, err = listenUnix(address)
		} else {
			ln, err = net.Listen(network, address)
		}
		if err != nil {
			return nil, fmt.Errorf("signerkit: chain %q: listen on %s: %w", ch.ID, vc.Addr, err)
		}
		v.ln = ln
	default:
		e, err := privval.NewEndpoint(g, privval.Config{Dialect: ch.dialect(), Network: network, Address: address, Handshake: hs,
			ChainID: ch.ID, RequestTimeout: ch.SignTimeout, OnRequest: onRequest, OnConnect: onConnect, OnDisconnect: onDisconnect})
		if err != nil {
			return nil, fmt.Errorf("signerkit: chain %q: %w", ch.ID, err)
		}
		v.ep = e
	}
	return v, nil
}

func stepOf(phase string) int {
	switch phase {
	case "proposal":
		return 1
	case "prevote":
		return 2
	}
	return 3
}

func peerString(k ed25519.PublicKey) string {
	if k == nil {
		return "none"
	}
	return fmt.Sprintf("ed25519:%x", []byte(k))
}

// peerAuth makes v's SecretConnection handshake (tm2's pre-Merlin form
// for tm2-remote) accepting the peers of allow (nil: any).
func (d *Daemon) peerAuth(v *validator, allow []ed25519.PublicKey) *peerAuth {
	if v.protocol == ProtocolTM2Remote {
		return &peerAuth{allow: allow, h: privval.LegacySecretConnection(d.id, allow)}
	}
	return &peerAuth{allow: allow, h: privval.SecretConnection(d.id, allow)}
}

// handshake returns v's Handshake: on TCP v's SecretConnection as it is
// at each connection (SIGHUP replaces it, applying to the next one),
// under the listener's admission (caps, tarpit: limit.go) for a
// listener; on Unix sockets none.
func (d *Daemon) handshake(v *validator, network string) privval.Handshake {
	if network != "tcp" {
		return func(_ context.Context, conn net.Conn) (net.Conn, ed25519.PublicKey, error) { return conn, nil, nil }
	}
	return func(ctx context.Context, conn net.Conn) (net.Conn, ed25519.PublicKey, error) {
		if v.admit != nil {
			return v.admit.handshake(ctx, conn, v.auth.Load().h)
		}
		sc, peer, err := v.auth.Load().h(ctx, conn)
		if err != nil {
			return nil, peer, &handshakeError{err}
		}
		return sc, peer, nil
	}
}

// handshakeError marks a connection that ended in its handshake.
type handshakeError struct{ err error }

func (e *handshakeError) Error() string { return e.err.Error() }
func (e *handshakeError) Unwrap() error { return e.err }

func remoteHost(conn net.Conn) string {
	a := conn.RemoteAddr()
	if a == nil {
		return ""
	}
	host, _, err := net.SplitHostPort(a.String())
	if err != nil {
		return a.String()
	}
	return host
}

// Metrics returns the daemon's metrics.
func (d *Daemon) Metrics() *Metrics { return d.m }

// MetricsAddr returns the address /metrics is served on, or "".
func (d *Daemon) MetricsAddr() string {
	if d.httpLn == nil {
		return ""
	}
	return d.httpLn.Addr().String()
}

// PublicKeys returns each chain's validator public key.
func (d *Daemon) PublicKeys() map[string]ed25519.PublicKey {
	out := map[string]ed25519.PublicKey{}
	for _, ch := range d.cfg.Chains {
		out[ch.ID] = d.keys[ch.Key].pub
	}
	return out
}

// GuardStats returns the counters of the guards, summed over keys.
func (d *Daemon) GuardStats() guard.Stats {
	var sum guard.Stats
	for _, g := range d.gs {
		st := g.Stats()
		sum.Signs += st.Signs
		sum.Cached += st.Cached
		sum.Refused += st.Refused
		sum.Syncs += st.Syncs
		sum.SyncTime += st.SyncTime
	}
	return sum
}

// Listeners returns the addresses the tm2-remote validators are served
// on, in config order.
func (d *Daemon) Listeners() []net.Addr {
	var out []net.Addr
	for _, v := range d.vals {
		if v.ln != nil {
			out = append(out, v.ln.Addr())
		}
	}
	return out
}

// IdentityKey returns the signer's identity public key, or nil.
func (d *Daemon) IdentityKey() ed25519.PublicKey {
	if d.id == nil {
		return nil
	}
	return d.id.Public().(ed25519.PublicKey)
}

// Ready reports whether every validator has a connection and every
// backend's device answered within its deadline (/readyz); when not, the
// first reason, with a backend's typed cause (the backend_errors_total
// cause names).
//
// A backend's health is its last answer, to a sign or to a probe, while
// that is younger than Options.HealthInterval or a sign is in flight.
// Otherwise Ready probes the device (signer.HealthChecker: an echo, a
// version or session query, never a sign) within the shortest
// sign_timeout of the key's chains; concurrent calls share one probe, and
// a probe is never cut short by its caller going away. A probe runs only
// on a device that has been idle for the interval, so it never waits for
// a sign; a sign that arrives during one may wait for its one round trip
// (a Ledger does one thing at a time). A probe that finds the device gone
// takes the backend down and starts reopening it, as a failed sign does.
func (d *Daemon) Ready(ctx context.Context) (bool, string) {
	for _, ch := range d.cfg.Chains {
		if err := d.damaged[ch.ID]; err != nil {
			return false, fmt.Sprintf("chain %s: double-sign state damaged, refusing to sign (see `signerkit state show`)", ch.ID)
		}
	}
	for _, v := range d.vals {
		if v.conns.Load() <= 0 {
			return false, fmt.Sprintf("chain %s: validator %s not connected", v.chain, v.addr)
		}
	}
	for _, uri := range d.keyOrder() {
		if ok, why := d.keys[uri].healthy(ctx); !ok {
			return false, why
		}
	}
	return true, "ready"
}

// keyOrder returns the key URIs in config order.
func (d *Daemon) keyOrder() []string {
	var out []string
	seen := map[string]bool{}
	for _, ch := range d.cfg.Chains {
		if !seen[ch.Key] && d.keys[ch.Key] != nil {
			seen[ch.Key] = true
			out = append(out, ch.Key)
		}
	}
	return out
}

// Run serves every validator until ctx ends, then shuts down gracefully:
// signs in flight are answered, nothing new is read, the state is synced
// and closed, the devices are closed. It returns nil when that finished
// within the config's shutdown_grace, else an error after stopping
// everything at once. Run closes the Daemon.
func (d *Daemon) Run(ctx context.Context) error {
	runCtx, stop := context.WithCancel(context.Background())
	defer stop()
	var wg sync.WaitGroup
	errs := make(chan error, len(d.vals)+1)
	if d.httpLn != nil {
		d.httpSrv = &http.Server{Handler: d.Handler(), ReadHeaderTimeout: 5 * time.Second}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := d.httpSrv.Serve(d.httpLn); err != nil && !errors.Is(err, http.ErrServerClosed) {
				errs <- fmt.Errorf("signerkit: metrics server: %w", err)
			}
		}()
	}
	for _, v := range d.vals {
		vctx := context.WithValue(runCtx, chainKey{}, v.chain)
		wg.Add(1)
		go func() {
			defer wg.Done()
			var err error
			if v.srv != nil {
				d.log.Info("listening for the validator", "chain", v.chain, "addr", v.addr, "protocol", v.protocol, "listen", v.ln.Addr().String())
				err = v.srv.Serve(vctx, v.ln)
			} else {
				d.log.Info("dialing the validator", "chain", v.chain, "addr", v.addr, "protocol", v.protocol)
				err = v.ep.Run(vctx)
			}
			if err != nil && !errors.Is(err, privval.ErrShutdown) && !errors.Is(err, context.Canceled) {
				errs <- fmt.Errorf("signerkit: chain %s validator %s: %w", v.chain, v.addr, err)
			}
		}()
	}
	var runErr error
	select {
	case <-ctx.Done():
	case runErr = <-errs:
		d.log.Error("stopping", "err", runErr)
	}
	grace := d.cfg.shutdownGrace()
	d.log.Info("shutting down", "grace", grace)
	gctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	var swg sync.WaitGroup
	var forced atomic.Bool
	for _, v := range d.vals {
		swg.Add(1)
		go func() {
			defer swg.Done()
			var err error
			if v.srv != nil {
				err = v.srv.Shutdown(gctx)
			} else {
				err = v.ep.Shutdown(gctx)
			}
			if err != nil {
				forced.Store(true)
			}
		}()
	}
	swg.Wait()
	stop() // anything still running after the grace period
	if d.httpSrv != nil {
		_ = d.httpSrv.Shutdown(gctx)
		_ = d.httpSrv.Close()
	}
	stopped := make(chan struct{})
	go func() {
		wg.Wait()
		close(stopped)
	}()
	select {
	case <-stopped:
	case <-time.After(grace):
		// A backend that ignores its context holds a sign, and the guard
		// its chain: closing either would wait for it. Nothing it signs
		// now can be released (its connection is closed), so leave it.
		return fmt.Errorf("signerkit: a backend sign did not return %v after it was cancelled; stopping without closing it (nothing unrecorded was released)", grace)
	}
	closeErr := d.close()
	if forced.Load() {
		return fmt.Errorf("signerkit: a sign was still in flight after shutdown_grace %v; stopped it (nothing unrecorded was released)", grace)
	}
	if runErr != nil {
		return runErr
	}
	if closeErr != nil {
		return closeErr
	}
	d.log.Info("stopped")
	return nil
}

// Close releases everything New opened, for a Daemon that will not Run.
func (d *Daemon) Close() error { return d.close() }

func (d *Daemon) close() error {
	var errs []error
	d.closeOnce.Do(func() {
		for _, v := range d.vals {
			if v.ln != nil {
				_ = v.ln.Close()
			}
		}
		if d.httpLn != nil && d.httpSrv == nil {
			_ = d.httpLn.Close()
		}
		// Closing a guard waits for its signs, closes the state files
		// and closes the backend under it.
		for uri, g := range d.gs {
			if err := g.Close(); err != nil && !errors.Is(err, signer.ErrClosed) {
				errs = append(errs, fmt.Errorf("signerkit: close %s: %w", Scheme(uri), err))
			}
			delete(d.keys, uri)
		}
		for _, b := range d.keys {
			_ = b.Close()
		}
		d.inflight.close()
		if d.id != nil {
			_ = d.id.Close()
		}
		_ = d.lock.Close()
	})
	return errors.Join(errs...)
}

// Reload reads the config file again and applies the allowlists of the
// validators it still lists; other changes need a restart and are logged.
func (d *Daemon) Reload() error {
	if d.cfg.Path == "" {
		return errors.New("signerkit: reload: the config was not read from a file")
	}
	cfg, parsed, err := loadConfig(d.cfg.Path)
	if err != nil {
		return err
	}
	type vkey struct{ chain, addr string }
	type entry struct {
		vc ValidatorConfig
		pv parsedValidator
	}
	next := map[vkey]entry{}
	for i, ch := range cfg.Chains {
		for j, v := range ch.Validators {
			next[vkey{ch.ID, v.Addr}] = entry{v, parsed[i][j]}
		}
	}
	for _, v := range d.vals {
		e, ok := next[vkey{v.chain, v.addr}]
		if !ok {
			d.log.Warn("reload: validator no longer in the config; restart to stop serving it", "chain", v.chain, "validator", v.addr)
			continue
		}
		if v.network == "tcp" { // the same addr, so the same network
			v.auth.Store(d.peerAuth(v, e.pv.allow))
		}
		d.log.Info("reload: allowlist applied", "chain", v.chain, "validator", v.addr, "keys", len(e.pv.allow), "allow_any", e.vc.AllowAny)
	}
	return nil
}
