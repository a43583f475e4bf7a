package daemon

import (
	"crypto/ed25519"
	"log/slog"
	"net"
	"net/http"
	"sync"

	"github.com/signerkit/signerkit/guard"
	"github.com/signerkit/signerkit/inprocess"
)

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
	shared  *sharedStore // Config.State (sharedstate.go), or nil
	// bindings is state_dir's KeysFile, read at the first chain's check.
	bindings *keyBindings
	inflight *inflight  // the backends' in-flight markers (inflight.go)
	lock     *StateLock // state_dir's lock, held from New to Close
	// damaged holds the chains whose state file is damaged: they refuse
	// every sign and /readyz says so (statedir.go).
	damaged map[string]error

	closeOnce sync.Once
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
