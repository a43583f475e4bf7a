package daemon

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/signerkit/signerkit/privval"
	"github.com/signerkit/signerkit/signer"
)

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
		wg.Add(1)
		go func() {
			defer wg.Done()
			var err error
			if v.srv != nil {
				d.log.Info("listening for the validator", "chain", v.chain, "addr", v.addr, "protocol", v.protocol, "listen", v.ln.Addr().String())
				err = v.srv.Serve(runCtx, v.ln)
			} else {
				d.log.Info("dialing the validator", "chain", v.chain, "addr", v.addr, "protocol", v.protocol)
				err = v.ep.Run(runCtx)
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
// validators it still lists; every other change needs a restart and is
// logged as a warning, one line per setting (unappliedChanges).
func (d *Daemon) Reload() error {
	if d.cfg.Path == "" {
		return errors.New("signerkit: reload: the config was not read from a file")
	}
	cfg, parsed, err := loadConfig(d.cfg.Path, false)
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
	for _, c := range unappliedChanges(d.cfg, cfg) {
		d.log.Warn("reload: change not applied; restart signerkit to apply it", "setting", c.Setting, "running", c.Old, "file", c.New)
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
