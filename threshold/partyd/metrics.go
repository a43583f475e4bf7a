package partyd

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/signerkit/signerkit/threshold"
)

// collectors are a party's metrics, read from its counters when scraped.
func collectors(p *threshold.Party) []prometheus.Collector {
	counter := func(name, help string, labels prometheus.Labels, f func() uint64) prometheus.Collector {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help, ConstLabels: labels},
			func() float64 { return float64(f()) })
	}
	gauge := func(name, help string, labels prometheus.Labels, f func() int) prometheus.Collector {
		return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help, ConstLabels: labels},
			func() float64 { return float64(f()) })
	}
	const refusals = "Sign requests refused or failed, by reason."
	const nonces = "Slots of the nonce store, by state."
	return []prometheus.Collector{
		counter("signerkit_party_shares_total", "Signature shares sent.", nil, func() uint64 { return p.ServeStats().Shares }),
		counter("signerkit_party_refusals_total", refusals, prometheus.Labels{"reason": "double_sign"}, func() uint64 { return p.ServeStats().Refused }),
		counter("signerkit_party_refusals_total", refusals, prometheus.Labels{"reason": "nonce_used"}, func() uint64 { return p.ServeStats().NonceUsed }),
		counter("signerkit_party_refusals_total", refusals, prometheus.Labels{"reason": "other"}, func() uint64 { return p.ServeStats().Failed }),
		counter("signerkit_party_presigned_total", "Nonce commitments handed out.", nil, func() uint64 { return p.ServeStats().Presigned }),
		gauge("signerkit_party_nonces", nonces, prometheus.Labels{"state": "fresh"}, func() int { return p.NonceStats().Fresh }),
		gauge("signerkit_party_nonces", nonces, prometheus.Labels{"state": "free"}, func() int { return p.NonceStats().Free }),
		gauge("signerkit_party_nonces", nonces, prometheus.Labels{"state": "capacity"}, func() int { return p.NonceStats().Capacity }),
		counter("signerkit_party_wire_bytes_total", "Bytes under TLS, by direction.", prometheus.Labels{"direction": "in"}, func() uint64 { return p.Counters().WireIn }),
		counter("signerkit_party_wire_bytes_total", "Bytes under TLS, by direction.", prometheus.Labels{"direction": "out"}, func() uint64 { return p.Counters().WireOut }),
	}
}
