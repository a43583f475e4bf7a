package daemon

// disconnectReasons are the values of validator_disconnects_total's
// reason label (disconnectReason).
var disconnectReasons = []string{"closed", "shutdown", "unauthorized", "protocol", "shed", "handshake", "dial", "timeout", "eof"}

// zeroCounters makes every label set of the daemon's counters that its
// config can produce, at 0, so that a fresh dashboard shows 0 rather
// than no data: per validator its disconnect reasons; per chain the
// device's refused in-flight signs; per backend its error causes, reopen
// results and health-check results. (Request counters are made per
// chain and phase by observers, the listeners' by newAdmission.)
func (d *Daemon) zeroCounters() {
	m := d.m
	backends := map[string]bool{}
	for _, ch := range d.cfg.Chains {
		backends[Scheme(ch.Key)] = true
		for _, p := range []string{"proposal", "prevote", "precommit"} {
			m.lostSigns.WithLabelValues(ch.ID, p)
		}
		for _, v := range ch.Validators {
			for _, r := range disconnectReasons {
				m.disconnects.WithLabelValues(ch.ID, v.Addr, r)
			}
		}
	}
	for b := range backends {
		m.healthChecks.WithLabelValues(b, "ok")
		for _, c := range causes {
			m.backendErrors.WithLabelValues(b, c.name)
			m.healthChecks.WithLabelValues(b, c.name)
		}
		m.backendErrors.WithLabelValues(b, "other")
		m.healthChecks.WithLabelValues(b, "other")
		for _, r := range []string{"ok", "error", "wrong_key", "unhealthy"} {
			m.backendReopens.WithLabelValues(b, r)
		}
	}
}
