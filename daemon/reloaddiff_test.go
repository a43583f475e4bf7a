package daemon

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// TestReloadWarnsUnapplied: SIGHUP applies the allowlists and warns of
// every other change, one line per setting, naming what runs and what the
// file says; a key URI's secret parts are not logged.
func TestReloadWarnsUnapplied(t *testing.T) {
	dir := t.TempDir()
	keyPath, _ := writeKey(t, dir, 5)
	key2, _ := writeKey(t, t.TempDir(), 7)
	idPath, _ := writeKey(t, dir, 6)
	stateDir := filepath.Join(dir, "state")
	if err := InitState(context.Background(), stateDir, chainID, 1); err != nil {
		t.Fatal(err)
	}
	cfgPath := filepath.Join(dir, "signerkit.toml")
	write := func(top, protocol, key, validators string) {
		t.Helper()
		data := fmt.Sprintf("state_dir = %q\nidentity_key = %q\n%s\n[[chain]]\nid = %q\nprotocol = %q\nkey = \"inprocess:file=%s\"\n%s",
			stateDir, idPath, top, chainID, protocol, key, validators)
		if err := os.WriteFile(cfgPath, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	v1 := "  [[chain.validator]]\n  addr = \"tcp://127.0.0.1:0\"\n  allow_any = true\n"
	write("", "tm2-remote", keyPath, v1)
	cfg, err := LoadConfig(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	var log logSink
	d, err := New(context.Background(), cfg, Options{Logger: slog.New(slog.NewTextHandler(&log, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()

	write("log_level = \"debug\"\nredial_max_backoff = \"2s\"", "tm2-tmkms", key2,
		v1+"  [[chain.validator]]\n  addr = \"unix:///tmp/none.sock\"\n[[chain]]\nid = \"other\"\nprotocol = \"tm2-remote\"\nkey = \"ledger:\"\n"+
			"  [[chain.validator]]\n  addr = \"unix:///tmp/none2.sock\"\n")
	if err := d.Reload(); err != nil {
		t.Fatal(err)
	}
	out := log.String()
	for _, want := range []string{
		`setting=log_level running=(unset) file=debug`,
		`setting=redial_max_backoff running=0s file=2s`,
		`setting="chain \"test-chain\".protocol" running=tm2-remote file=tm2-tmkms`,
		`setting="chain \"test-chain\".key" running="inprocess:file=` + keyPath + `" file="inprocess:file=` + key2 + `"`,
		`setting="chain \"test-chain\".validator" running=(unset) file="unix:///tmp/none.sock (added; not served until a restart)"`,
		`setting="chain \"other\"" running=(unset) file="added (not served until a restart)"`,
		`reload: allowlist applied`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("reload log lacks %s:\n%s", want, out)
		}
	}
	if n := strings.Count(out, "change not applied"); n != 6 {
		t.Errorf("%d warnings, want 6:\n%s", n, out)
	}
}

// TestCountersStartAtZero: right after New, before any request, every
// counter has a series per label set the config can produce, at 0, so a
// dashboard shows 0 rather than no data.
func TestCountersStartAtZero(t *testing.T) {
	dir := t.TempDir()
	keyPath, _ := writeKey(t, dir, 5)
	idPath, _ := writeKey(t, dir, 6)
	stateDir := filepath.Join(dir, "state")
	if err := InitState(context.Background(), stateDir, chainID, 1); err != nil {
		t.Fatal(err)
	}
	cfgPath := filepath.Join(dir, "signerkit.toml")
	data := fmt.Sprintf("state_dir = %q\nidentity_key = %q\n[[chain]]\nid = %q\nprotocol = \"tm2-remote\"\nkey = \"inprocess:file=%s\"\n"+
		"  [[chain.validator]]\n  addr = \"tcp://127.0.0.1:0\"\n  allow_any = true\n", stateDir, idPath, chainID, keyPath)
	if err := os.WriteFile(cfgPath, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := LoadConfig(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	d, err := New(context.Background(), cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	fams, err := d.m.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, f := range fams {
		if f.GetType().String() != "COUNTER" {
			continue
		}
		for _, m := range f.GetMetric() {
			if v := m.GetCounter().GetValue(); v != 0 {
				t.Errorf("%s %v = %v before any request", f.GetName(), m.GetLabel(), v)
			}
		}
		seen[f.GetName()] = len(f.GetMetric())
	}
	for _, c := range []*prometheus.CounterVec{d.m.requests, d.m.refusals, d.m.connects, d.m.disconnects, d.m.throttled, d.m.pendingShed,
		d.m.acceptErrors, d.m.backendErrors, d.m.backendReopens, d.m.healthChecks, d.m.lostSigns} {
		desc := make(chan *prometheus.Desc, 1)
		c.Describe(desc)
		name := (<-desc).String()
		name = name[strings.Index(name, `fqName: "`)+9:]
		name = name[:strings.IndexByte(name, '"')]
		if seen[name] == 0 {
			t.Errorf("%s has no series before any request", name)
		}
	}
}

// TestUnappliedCoversEveryField: a change to any scalar setting of
// Config or ChainConfig is either reported as unapplied or one Reload
// applies, so a setting added later cannot be changed in the file and
// silently ignored by a reload.
func TestUnappliedCoversEveryField(t *testing.T) {
	base := func() *Config {
		return &Config{StateDir: "/s", ShutdownGrace: time.Second, Chains: []ChainConfig{{
			ID: "c", Protocol: ProtocolCometBFT038, Key: "inprocess:file=/k", SignTimeout: time.Second,
			Validators: []ValidatorConfig{{Addr: "unix:///v.sock"}},
		}}}
	}
	// Path is where the file was read from, not a setting; Chains and ID
	// are covered as chains added and removed.
	skip := map[string]bool{"Path": true, "Chains": true, "ID": true, "Validators": true}
	change := func(t *testing.T, v reflect.Value, name string) {
		switch v.Kind() {
		case reflect.String:
			v.SetString(v.String() + "x")
		case reflect.Int, reflect.Int64:
			v.SetInt(v.Int() + 7)
		case reflect.Bool:
			v.SetBool(!v.Bool())
		default:
			t.Fatalf("field %s of kind %v: teach this test (and unappliedChanges) about it", name, v.Kind())
		}
	}
	for _, level := range []string{"Config", "ChainConfig"} {
		typ := reflect.TypeOf(Config{})
		if level == "ChainConfig" {
			typ = reflect.TypeOf(ChainConfig{})
		}
		for i := range typ.NumField() {
			f := typ.Field(i)
			if skip[f.Name] || !f.IsExported() {
				continue
			}
			next := base()
			target := reflect.ValueOf(next).Elem()
			if level == "ChainConfig" {
				target = reflect.ValueOf(&next.Chains[0]).Elem()
			}
			change(t, target.Field(i), level+"."+f.Name)
			if got := unappliedChanges(base(), next); len(got) == 0 {
				t.Errorf("a change to %s.%s is not reported as unapplied", level, f.Name)
			}
		}
	}
}
