package daemon

import (
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// metricNames returns the names of every metric the daemon registers.
func metricNames() []string {
	m := newMetrics("test")
	ch := make(chan *prometheus.Desc, 64)
	for _, c := range m.collectors {
		c.Describe(ch)
	}
	close(ch)
	re := regexp.MustCompile(`fqName: "([a-z_]+)"`)
	var names []string
	for d := range ch {
		if s := re.FindStringSubmatch(d.String()); s != nil {
			names = append(names, s[1])
		}
	}
	return names
}

// TestMetricsDocumented: docs/metrics.md documents every metric, and names
// none that does not exist.
func TestMetricsDocumented(t *testing.T) {
	doc, err := os.ReadFile("../docs/metrics.md")
	if err != nil {
		t.Fatal(err)
	}
	names := metricNames()
	if len(names) < 15 {
		t.Fatalf("only %d metrics described", len(names))
	}
	for _, n := range names {
		if !strings.Contains(string(doc), "`"+n+"`") {
			t.Errorf("docs/metrics.md does not document %s", n)
		}
	}
	for _, n := range regexp.MustCompile("`(signerkit_[a-z_]+)`").FindAllStringSubmatch(string(doc), -1) {
		if !slices.Contains(names, n[1]) {
			t.Errorf("docs/metrics.md documents %s, which the daemon does not export", n[1])
		}
	}
}

// TestGrafanaDashboard: the dashboard is JSON with panels whose queries
// use only metrics the daemon exports (histograms by their _bucket, _sum
// and _count series).
func TestGrafanaDashboard(t *testing.T) {
	b, err := os.ReadFile("../docs/grafana-dashboard.json")
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Title  string `json:"title"`
		Panels []struct {
			Title   string `json:"title"`
			Type    string `json:"type"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(b, &dash); err != nil {
		t.Fatal(err)
	}
	if dash.Title == "" || len(dash.Panels) == 0 {
		t.Fatal("no title or panels")
	}
	names := metricNames()
	used := map[string]bool{}
	for _, p := range dash.Panels {
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, tg := range p.Targets {
			for _, m := range regexp.MustCompile(`signerkit_[a-z_]+`).FindAllString(tg.Expr, -1) {
				base := m
				for _, suf := range []string{"_bucket", "_sum", "_count"} {
					if s, ok := strings.CutSuffix(m, suf); ok && slices.Contains(names, s) {
						base = s
					}
				}
				if !slices.Contains(names, base) {
					t.Errorf("panel %q uses %s, which the daemon does not export", p.Title, m)
				}
				used[base] = true
			}
		}
	}
	for _, n := range []string{"signerkit_request_duration_seconds", "signerkit_sign_stage_duration_seconds", "signerkit_last_signed_height",
		"signerkit_double_sign_refusals_total", "signerkit_validator_connected", "signerkit_backend_errors_total"} {
		if !used[n] {
			t.Errorf("the dashboard does not show %s", n)
		}
	}
}
