// Package partyd runs one party of a threshold key as a service, the
// logic of `signerkit party`: a threshold.Party serving its share over
// mutual TLS from a threshold.PartySetup (its config file loaded), with
// the party's own double-sign guard over its state directory, its nonce
// store on disk, and an HTTP listener for /metrics, /healthz and /readyz;
// or (NewDKLS23) a threshold.DKLS23Party serving a secp256k1 account
// key's share, with the same listener.
//
// A Server refuses to start while a chain it signs for has no double-sign
// state (threshold.PartySetup.InitState makes it), as the daemon does:
// where a key's signing history ends is the operator's to say.
//
// /healthz answers 200 while the process serves. /readyz answers 200 when
// the party is serving and its nonce store has free slots or fresh pairs
// to hand out, else 503 and the reason; a DKLS23 party's answers 200
// while it serves (its presignatures are made on request). Every metric
// is listed in docs/threshold.md.
//
// A Server is safe for concurrent use.
package partyd

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/threshold"
)

// Server is one running party.
type Server struct {
	svc     service
	party   *threshold.Party       // a FROST party, or nil
	dkls    *threshold.DKLS23Party // a DKLS23 party, or nil
	id      int
	grace   time.Duration // shutdown_grace
	attrs   []any         // logged when serving starts
	ln      net.Listener
	httpLn  net.Listener
	log     *slog.Logger
	reg     *prometheus.Registry
	serving atomic.Bool
}

// service is the party a Server runs.
type service interface {
	Serve(net.Listener) error
	Close() error
}

// New makes the party of setup and listens on its addresses (the party's
// and, when set, the metrics'), serving nothing until Run. It refuses a
// setup whose chains lack double-sign state. The caller still closes
// setup, after Run returns.
func New(setup *threshold.PartySetup, log *slog.Logger) (*Server, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	missing, err := setup.MissingState()
	if err != nil {
		return nil, err
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("partyd: no double-sign state for chain %s in %s: run `signerkit party -config %s -init-height H`, "+
			"H being the first height this key may sign (one more than the last height any signer of it may have signed; 1 for a new chain): %w",
			strings.Join(missing, ", "), setup.GuardDir, setup.Path, signer.ErrInvalidArgument)
	}
	cfg := setup.Config
	cfg.Log = log
	p, err := threshold.NewParty(cfg)
	if err != nil {
		return nil, err
	}
	s := &Server{svc: p, party: p, id: int(p.ID()), grace: setup.File.ShutdownGrace, log: log,
		attrs: []any{"chains", strings.Join(setup.File.Chains, ",")}}
	if err := s.listen(setup.File.Listen, setup.File.MetricsAddr, collectors(p)); err != nil {
		return nil, err
	}
	return s, nil
}

// NewDKLS23 makes the DKLS23 party of setup and listens on its addresses
// (the party's and, when set, the metrics'), serving nothing until Run.
func NewDKLS23(setup *threshold.DKLS23PartySetup, log *slog.Logger) (*Server, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	cfg := setup.Config
	cfg.Log = log
	p, err := threshold.NewDKLS23Party(cfg)
	if err != nil {
		return nil, err
	}
	s := &Server{svc: p, dkls: p, id: p.ID(), grace: setup.File.ShutdownGrace, log: log,
		attrs: []any{"scheme", threshold.SchemeDKLS23, "key", fmt.Sprintf("%x", cfg.Share.PublicKey())}}
	if err := s.listen(setup.File.Listen, setup.File.MetricsAddr, dklsCollectors(p)); err != nil {
		return nil, err
	}
	return s, nil
}

// listen opens the party's listener and, when metrics is set, the
// metrics', and registers cs; on failure it closes what it opened and
// the party.
func (s *Server) listen(addr, metrics string, cs []prometheus.Collector) error {
	var err error
	if s.ln, err = net.Listen("tcp", addr); err != nil {
		s.svc.Close()
		return fmt.Errorf("partyd: listen: %w", err)
	}
	if metrics != "" {
		if s.httpLn, err = net.Listen("tcp", metrics); err != nil {
			s.ln.Close()
			s.svc.Close()
			return fmt.Errorf("partyd: metrics: %w", err)
		}
	}
	s.reg = prometheus.NewRegistry()
	s.reg.MustRegister(cs...)
	return nil
}

// Addr is the address the party serves on.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// MetricsAddr is the address of /metrics, or "".
func (s *Server) MetricsAddr() string {
	if s.httpLn == nil {
		return ""
	}
	return s.httpLn.Addr().String()
}

// Party returns the FROST party served, or nil.
func (s *Server) Party() *threshold.Party { return s.party }

// DKLS23Party returns the DKLS23 party served, or nil.
func (s *Server) DKLS23Party() *threshold.DKLS23Party { return s.dkls }

// Handler serves /metrics, /healthz and /readyz.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(s.reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok\n")) })
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		ok, why := s.Ready()
		if !ok {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
		_, _ = w.Write([]byte(why + "\n"))
	})
	return mux
}

// Ready reports whether the party serves and (a FROST party) can hand
// out nonce pairs.
func (s *Server) Ready() (bool, string) {
	if !s.serving.Load() {
		return false, "not serving"
	}
	if s.party == nil {
		return true, "ready"
	}
	if st := s.party.NonceStats(); st.Free == 0 && st.Fresh == 0 {
		return false, "the nonce store has no free slot"
	}
	return true, "ready"
}

// Run serves until ctx ends or the party's listener fails, then closes
// the party: its listener and connections, after the requests in flight
// (bounded by the setup's shutdown_grace, 5 s by default, after which
// Run returns and the process may exit; a request cut short never sent
// its share, and its nonce pair is consumed on disk already).
func (s *Server) Run(ctx context.Context) error {
	var hs *http.Server
	if s.httpLn != nil {
		hs = &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 5 * time.Second}
		go func() {
			if err := hs.Serve(s.httpLn); err != nil && !errors.Is(err, http.ErrServerClosed) {
				s.log.Error("metrics listener failed", "err", err)
			}
		}()
	}
	done := make(chan error, 1)
	s.serving.Store(true)
	go func() { done <- s.svc.Serve(s.ln) }()
	s.log.Info("party serving", append([]any{"id", s.id, "addr", s.Addr(), "metrics", s.MetricsAddr()}, s.attrs...)...)
	var err error
	select {
	case <-ctx.Done():
	case err = <-done:
	}
	s.serving.Store(false)
	grace := s.grace
	if grace == 0 {
		grace = 5 * time.Second
	}
	closed := make(chan error, 1)
	go func() { closed <- s.svc.Close() }()
	select {
	case cerr := <-closed:
		if err == nil {
			err = cerr
		}
	case <-time.After(grace):
		s.log.Warn("requests still in flight after the shutdown grace", "grace", grace)
	}
	if hs != nil {
		sctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_ = hs.Shutdown(sctx)
		cancel()
	}
	s.log.Info("party stopped", "id", s.id)
	return err
}

// Close releases what New took, for a Server never Run.
func (s *Server) Close() error {
	if s.httpLn != nil {
		s.httpLn.Close()
	}
	s.ln.Close()
	return s.svc.Close()
}
