package daemon

import (
	"fmt"
	"strconv"
)

// unapplied is a change in the config file that Reload does not apply.
type unapplied struct {
	Setting  string // e.g. `chain "c".key`
	Old, New string // "(unset)" for a setting added or removed
}

// unappliedChanges lists every difference between the config the daemon
// runs (old) and the file read again (next) that Reload does not apply:
// everything but the validators' allowlists (allow, allow_any), and the
// validators removed, which Reload warns of itself. Key URIs are
// redacted.
func unappliedChanges(old, next *Config) []unapplied {
	var out []unapplied
	add := func(setting, o, n string) {
		if o == n {
			return
		}
		if o == "" {
			o = "(unset)"
		}
		if n == "" {
			n = "(unset)"
		}
		out = append(out, unapplied{setting, o, n})
	}
	add("state_dir", old.StateDir, next.StateDir)
	add("state", RedactURI(old.State), RedactURI(next.State))
	add("identity_key", old.IdentityKey, next.IdentityKey)
	add("metrics_addr", old.MetricsAddr, next.MetricsAddr)
	add("shutdown_grace", old.ShutdownGrace.String(), next.ShutdownGrace.String())
	add("log_level", old.LogLevel, next.LogLevel)
	add("log_format", old.LogFormat, next.LogFormat)
	add("max_pending_handshakes", strconv.Itoa(old.MaxPendingHandshakes), strconv.Itoa(next.MaxPendingHandshakes))
	add("max_pending_handshakes_per_host", strconv.Itoa(old.MaxPendingHandshakesPerHost), strconv.Itoa(next.MaxPendingHandshakesPerHost))
	add("redial_max_backoff", old.RedialMaxBackoff.String(), next.RedialMaxBackoff.String())
	nextChains := map[string]ChainConfig{}
	for _, ch := range next.Chains {
		nextChains[ch.ID] = ch
	}
	seen := map[string]bool{}
	for _, o := range old.Chains {
		seen[o.ID] = true
		n, ok := nextChains[o.ID]
		if !ok {
			add(fmt.Sprintf("chain %q", o.ID), "served", "removed (still served until a restart)")
			continue
		}
		key := fmt.Sprintf("chain %q.", o.ID)
		add(key+"protocol", o.Protocol, n.Protocol)
		add(key+"key", RedactURI(o.Key), RedactURI(n.Key))
		if o.Key != n.Key && RedactURI(o.Key) == RedactURI(n.Key) {
			add(key+"key", "(a secret part)", "(changed)")
		}
		add(key+"sign_timeout", o.SignTimeout.String(), n.SignTimeout.String())
		served := map[string]bool{}
		for _, v := range o.Validators {
			served[v.Addr] = true
		}
		for _, v := range n.Validators {
			if !served[v.Addr] {
				add(key+"validator", "", v.Addr+" (added; not served until a restart)")
			}
		}
	}
	for _, n := range next.Chains {
		if !seen[n.ID] {
			add(fmt.Sprintf("chain %q", n.ID), "", "added (not served until a restart)")
		}
	}
	return out
}
