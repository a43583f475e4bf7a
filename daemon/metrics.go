package daemon

import (
	"context"
	"errors"
	"net"
	"runtime"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/signerkit/signerkit/guard"
	"github.com/signerkit/signerkit/privval"
	"github.com/signerkit/signerkit/signer"
)

// latencyBuckets span 10 µs (an in-process key) to 10 s (a Ledger waiting
// for its user), in seconds.
var latencyBuckets = []float64{0.00001, 0.000025, 0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005,
	0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}

// Metrics are the daemon's Prometheus collectors (docs/metrics.md lists
// them). They live in their own Registry, so that an embedding program
// chooses whether to serve them.
type Metrics struct {
	Registry *prometheus.Registry

	requestSeconds *prometheus.HistogramVec // chain, phase, backend
	backendSeconds *prometheus.HistogramVec // chain, phase, backend
	stageSeconds   *prometheus.HistogramVec // chain, phase, backend, stage, source
	requests       *prometheus.CounterVec   // chain, phase, outcome
	refusals       *prometheus.CounterVec   // chain, phase
	lastHeight     *prometheus.GaugeVec     // chain
	lastRound      *prometheus.GaugeVec     // chain
	lastStep       *prometheus.GaugeVec     // chain
	connected      *prometheus.GaugeVec     // chain, validator
	connects       *prometheus.CounterVec   // chain, validator
	disconnects    *prometheus.CounterVec   // chain, validator, reason
	throttled      *prometheus.CounterVec   // chain, validator
	pending        *prometheus.GaugeVec     // chain, validator (limit.go)
	pendingShed    *prometheus.CounterVec   // chain, validator, cap
	acceptErrors   *prometheus.CounterVec   // chain, validator
	backendUp      *prometheus.GaugeVec     // backend
	backendErrors  *prometheus.CounterVec   // backend, cause
	backendReopens *prometheus.CounterVec   // backend, result
	healthChecks   *prometheus.CounterVec   // backend, result
	lostSigns      *prometheus.CounterVec   // chain, phase (inflight.go)
	stateDamaged   *prometheus.GaugeVec     // chain (statedir.go)
	shared         *sharedMetrics           // sharedstate.go

	collectors []prometheus.Collector
}

func newMetrics(version string) *Metrics {
	m := &Metrics{Registry: prometheus.NewRegistry()}
	hist := func(name, help string, labels ...string) *prometheus.HistogramVec {
		return prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: "signerkit", Name: name, Help: help, Buckets: latencyBuckets}, labels)
	}
	counter := func(name, help string, labels ...string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "signerkit", Name: name, Help: help}, labels)
	}
	gauge := func(name, help string, labels ...string) *prometheus.GaugeVec {
		return prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: "signerkit", Name: name, Help: help}, labels)
	}
	m.requestSeconds = hist("request_duration_seconds", "Time from a validator request read to its answer written, guard, state sync and backend included (measured).", "chain", "phase", "backend")
	m.backendSeconds = hist("backend_sign_duration_seconds", "Wall-clock time of the backend's sign (measured).", "chain", "phase", "backend")
	m.stageSeconds = hist("sign_stage_duration_seconds", "Time per stage of a backend sign as the backend reports it, and of the guard's state write after it (stage state); source is measured (a clock here) or modeled (a simulator's latency profile).", "chain", "phase", "backend", "stage", "source")
	m.requests = counter("requests_total", "Requests answered, by outcome: signed (a new signature, or a pubkey or ping answered), cached (the guard's stored signature), refused (a RemoteSignerError).", "chain", "phase", "outcome")
	m.refusals = counter("double_sign_refusals_total", "Signs the guard refused as double signs.", "chain", "phase")
	m.lastHeight = gauge("last_signed_height", "Height of the last vote or proposal signed.", "chain")
	m.lastRound = gauge("last_signed_round", "Round of the last vote or proposal signed.", "chain")
	m.lastStep = gauge("last_signed_step", "Step of the last signed: 1 proposal, 2 prevote, 3 precommit.", "chain")
	m.connected = gauge("validator_connected", "Connections to the validator that completed their handshake and are open.", "chain", "validator")
	m.connects = counter("validator_connects_total", "Connections to the validator that completed their handshake.", "chain", "validator")
	m.disconnects = counter("validator_disconnects_total", "Connections ended and dials failed, by reason.", "chain", "validator", "reason")
	m.throttled = counter("handshakes_throttled_total", "Connections whose handshake failed held open (tarpitted) before they were closed, 100 ms doubling to 5 s with their source's failures in a row.", "chain", "validator")
	m.pending = gauge("pending_handshakes", "Connections to a tm2-remote TCP listener accepted and not yet past their handshake (in it, or tarpitted).", "chain", "validator")
	m.pendingShed = counter("pending_handshakes_shed_total", "Pending connections closed at once to stay under a cap, by cap: host (max_pending_handshakes_per_host), total (max_pending_handshakes), descriptors (accept ran out of file descriptors).", "chain", "validator", "cap")
	m.acceptErrors = counter("accept_errors_total", "Temporary accept errors of a tm2-remote listener (out of file descriptors, a connection aborted); each is retried after 5 ms doubling to 1 s.", "chain", "validator")
	m.backendUp = gauge("backend_up", "1 while the backend's key is open; 0 from the moment its device went away until it is reopened.", "backend")
	m.backendErrors = counter("backend_errors_total", "Backend sign errors by typed cause.", "backend", "cause")
	m.backendReopens = counter("backend_reopens_total", "Attempts to reopen a backend that went away, by result: ok, error, wrong_key, unhealthy.", "backend", "result")
	m.stateDamaged = gauge("state_damaged", "1 while the chain's double-sign state file is damaged and the chain refuses to sign: see `signerkit state show`.", "chain")
	m.healthChecks = counter("backend_health_checks_total", "Health probes of a backend's device made for /readyz, by result: ok or the typed cause of the failure.", "backend", "result")
	m.lostSigns = counter("device_refused_inflight_total", "Votes and proposals the device refused as double signs at the height/round/step of a sign whose answer was lost (the daemon killed while the device signed, or a timeout): the device signed it and the signature is lost.", "chain", "phase")
	info := prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: "signerkit", Name: "build_info", Help: "Always 1; the labels say which build runs."}, []string{"version", "goversion"})
	info.WithLabelValues(version, runtime.Version()).Set(1)
	m.collectors = []prometheus.Collector{m.requestSeconds, m.backendSeconds, m.stageSeconds, m.requests, m.refusals, m.lastHeight, m.lastRound,
		m.lastStep, m.connected, m.connects, m.disconnects, m.throttled, m.pending, m.pendingShed, m.acceptErrors, m.backendUp, m.backendErrors, m.backendReopens, m.healthChecks, m.lostSigns, m.stateDamaged, info}
	m.shared = newSharedMetrics()
	m.collectors = append(m.collectors, m.shared.collectors()...)
	m.Registry.MustRegister(m.collectors...)
	return m
}

// phaseObservers are the per-phase children of one chain's request
// metrics, resolved once so that a request costs no label lookup.
type phaseObservers struct {
	seconds                      prometheus.Observer
	signed, cached, refused, dsr prometheus.Counter
}

func (m *Metrics) observers(chain, backend string) map[string]*phaseObservers {
	out := map[string]*phaseObservers{}
	for _, p := range []string{"proposal", "prevote", "precommit", privval.LabelPubKey, privval.LabelPing, privval.LabelSign} {
		out[p] = &phaseObservers{
			seconds: m.requestSeconds.WithLabelValues(chain, p, backend),
			signed:  m.requests.WithLabelValues(chain, p, "signed"),
			cached:  m.requests.WithLabelValues(chain, p, "cached"),
			refused: m.requests.WithLabelValues(chain, p, "refused"),
			dsr:     m.refusals.WithLabelValues(chain, p),
		}
	}
	return out
}

// Cause names the typed cause of a backend error, as the backend_errors_total
// cause label: the signer sentinel it wraps, or "timeout", "canceled",
// "other".
func Cause(err error) string {
	for _, c := range causes {
		if errors.Is(err, c.err) {
			return c.name
		}
	}
	return "other"
}

var causes = []struct {
	err  error
	name string
}{
	{context.DeadlineExceeded, "timeout"},
	{context.Canceled, "canceled"},
	{signer.ErrDisconnected, "disconnected"},
	{signer.ErrDeviceNotFound, "device_not_found"},
	{signer.ErrDeviceLocked, "device_locked"},
	{signer.ErrAppNotOpen, "app_not_open"},
	{signer.ErrRejected, "rejected"},
	{signer.ErrBusy, "busy"},
	{signer.ErrSessionExpired, "session_expired"},
	{signer.ErrClosed, "closed"},
	{signer.ErrPermissionDenied, "permission_denied"},
	{signer.ErrWrongPassphrase, "wrong_passphrase"},
	{signer.ErrDoubleSign, "double_sign"},
	{signer.ErrInvalidMessage, "invalid_message"},
	{signer.ErrMessageTooLarge, "message_too_large"},
	{signer.ErrProtocol, "protocol"},
	{signer.ErrUnsupported, "unsupported"},
}

// disconnectReason names why a validator connection ended, for the
// validator_disconnects_total reason label.
func disconnectReason(err error) string {
	var pe *privval.ProtocolError
	var ue *privval.UnauthorizedPeerError
	var ne net.Error
	var he *handshakeError
	switch {
	case err == nil:
		return "closed"
	case errors.Is(err, privval.ErrShutdown):
		return "shutdown"
	case errors.As(err, &ue):
		return "unauthorized"
	case errors.As(err, &pe):
		return "protocol"
	case errors.Is(err, errShed):
		return "shed"
	case errors.As(err, &he):
		return "handshake"
	case errors.Is(err, signer.ErrProtocol): // the secure channel refused a frame (tampered, replayed)
		return "protocol"
	}
	var oe *net.OpError
	switch {
	case errors.As(err, &oe) && oe.Op == "dial":
		return "dial"
	case errors.As(err, &ne) && ne.Timeout():
		return "timeout"
	case errors.Is(err, net.ErrClosed):
		return "closed"
	}
	return "eof"
}

// refusal reports whether err, sent back to a validator, is a double sign.
func isDoubleSign(err error) bool {
	var ts *guard.TimestampError
	return errors.Is(err, signer.ErrDoubleSign) || errors.As(err, &ts)
}
