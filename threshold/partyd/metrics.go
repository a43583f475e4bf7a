package partyd

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/signerkit/signerkit/threshold"
)

func counter(name, help string, labels prometheus.Labels, f func() uint64) prometheus.Collector {
	return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help, ConstLabels: labels},
		func() float64 { return float64(f()) })
}

func gauge(name, help string, labels prometheus.Labels, f func() int) prometheus.Collector {
	return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help, ConstLabels: labels},
		func() float64 { return float64(f()) })
}

const refusals = "Sign requests refused or failed, by reason."

// served are the metrics every party has, FROST or DKLS23: shares sent,
// refusals for a used nonce (or presignature) and for other reasons,
// nonces (or presignatures) made, and bytes under TLS.
func served(stats func() threshold.ServeStats, wire func() threshold.Counters, presigned string) []prometheus.Collector {
	const bytes = "Bytes under TLS, by direction."
	return []prometheus.Collector{
		counter("signerkit_party_shares_total", "Signature shares sent.", nil, func() uint64 { return stats().Shares }),
		counter("signerkit_party_refusals_total", refusals, prometheus.Labels{"reason": "nonce_used"}, func() uint64 { return stats().NonceUsed }),
		counter("signerkit_party_refusals_total", refusals, prometheus.Labels{"reason": "other"}, func() uint64 { return stats().Failed }),
		counter("signerkit_party_presigned_total", presigned, nil, func() uint64 { return stats().Presigned }),
		counter("signerkit_party_wire_bytes_total", bytes, prometheus.Labels{"direction": "in"}, func() uint64 { return wire().WireIn }),
		counter("signerkit_party_wire_bytes_total", bytes, prometheus.Labels{"direction": "out"}, func() uint64 { return wire().WireOut }),
	}
}

// collectors are a FROST party's metrics, read from its counters when
// scraped.
func collectors(p *threshold.Party) []prometheus.Collector {
	const nonces = "Slots of the nonce store, by state."
	return append(served(p.ServeStats, p.Counters, "Nonce commitments handed out."),
		counter("signerkit_party_refusals_total", refusals, prometheus.Labels{"reason": "double_sign"}, func() uint64 { return p.ServeStats().Refused }),
		gauge("signerkit_party_nonces", nonces, prometheus.Labels{"state": "fresh"}, func() int { return p.NonceStats().Fresh }),
		gauge("signerkit_party_nonces", nonces, prometheus.Labels{"state": "free"}, func() int { return p.NonceStats().Free }),
		gauge("signerkit_party_nonces", nonces, prometheus.Labels{"state": "capacity"}, func() int { return p.NonceStats().Capacity }),
	)
}

// dklsCollectors are a DKLS23 party's metrics: those of every party, and
// the presignatures it holds ready.
func dklsCollectors(p *threshold.DKLS23Party) []prometheus.Collector {
	return append(served(p.ServeStats, p.Counters, "Presignatures made."),
		gauge("signerkit_party_presignatures", "DKLS23 presignatures held ready.", nil, p.Presignatures))
}
