package daemon

import (
	"context"
	"fmt"
)

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
	if ok, why := d.sharedReady(ctx); !ok {
		return false, why
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
