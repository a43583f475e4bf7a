package daemon

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Handler serves /metrics (Prometheus text format), /healthz (200 while
// the process serves) and /readyz (200 when every validator is connected
// and every backend's device answered within its deadline, probed at most
// once per Options.HealthInterval; else 503 and the reason: see Ready).
func (d *Daemon) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(d.m.Registry, promhttp.HandlerOpts{}))
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte("ok\n"))
	})
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, r *http.Request) {
		ok, why := d.Ready(r.Context())
		if !ok {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
		_, _ = w.Write([]byte(why + "\n"))
	})
	return mux
}
