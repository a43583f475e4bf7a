package daemon

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const validConfig = `state_dir = "/var/lib/signerkit"
identity_key = "/etc/signerkit/identity.pem"
metrics_addr = "127.0.0.1:26661"
shutdown_grace = "3s"

[[chain]]
id = "test-chain"
protocol = "cometbft-v0.38"
key = "ledger:"

  [[chain.validator]]
  addr = "tcp://10.0.0.1:26659"
  allow = ["ed25519:0101010101010101010101010101010101010101010101010101010101010101"]

  [[chain.validator]]
  addr = "unix:///run/signerkit/v.sock"

[[chain]]
id = "gno-chain"
protocol = "tm2-remote"
key = "keybase:dir=/var/lib/gnokey;label=v?pin-source=env:P"
sign_timeout = "2s"

  [[chain.validator]]
  addr = "tcp://0.0.0.0:26658"
  allow = [
    "AQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQE=",
  ]
`

func TestParseConfig(t *testing.T) {
	cfg, err := ParseConfig([]byte(validConfig))
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Chains) != 2 || len(cfg.Chains[0].Validators) != 2 || cfg.ShutdownGrace.Seconds() != 3 {
		t.Fatalf("parsed %+v", cfg)
	}
	keys, err := cfg.Chains[1].Validators[0].AllowKeys()
	if err != nil || len(keys) != 1 || keys[0][0] != 1 {
		t.Fatalf("allow %v, %v", keys, err)
	}
	if n, a, _ := cfg.Chains[0].Validators[1].Network(); n != "unix" || a != "/run/signerkit/v.sock" {
		t.Fatalf("network %q %q", n, a)
	}
}

// TestUnknownKey: a key the config does not know names the key and its
// line, wherever it is: top level, a chain, the second validator of a
// chain, after a value that spans lines.
func TestUnknownKey(t *testing.T) {
	lines := strings.Split(validConfig, "\n")
	insert := func(after int, text string) string {
		out := append([]string{}, lines[:after]...)
		out = append(out, text)
		return strings.Join(append(out, lines[after:]...), "\n")
	}
	for _, tc := range []struct {
		name, data, key string
		line            int
	}{
		{"top", insert(2, `metrics_adr = "x"`), "metrics_adr", 3},
		{"chain", insert(8, `protocl = "x"`), "chain.protocl", 9},
		{"second validator", insert(15, `  alow = []`), "chain.validator.alow", 16},
		{"after multi-line array", validConfig + "    extra = 1\n", "chain.validator.extra", len(lines)},
		{"table", insert(0, "[metrics]\naddr = \"x\"\n"), "metrics", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseConfig([]byte(tc.data))
			var ce *ConfigError
			if !errors.As(err, &ce) {
				t.Fatalf("err %v, want *ConfigError", err)
			}
			if ce.Key != tc.key || ce.Line != tc.line {
				t.Fatalf("key %q line %d, want %q line %d (%v)", ce.Key, ce.Line, tc.key, tc.line, err)
			}
			if !strings.Contains(err.Error(), tc.key) || !strings.Contains(err.Error(), "unknown key") {
				t.Fatalf("message %q", err)
			}
		})
	}
}

func TestLoadConfigNamesFileAndLine(t *testing.T) {
	p := filepath.Join(t.TempDir(), "signerkit.toml")
	if err := os.WriteFile(p, []byte("state_dir = \"/x\"\nstate_dri = \"/y\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := LoadConfig(p)
	if err == nil || !strings.Contains(err.Error(), p+":2: state_dri: unknown key") {
		t.Fatalf("err %v", err)
	}
}

func TestSyntaxErrorLine(t *testing.T) {
	_, err := ParseConfig([]byte("state_dir = \"/x\"\n\n[[chain]\n"))
	var ce *ConfigError
	if !errors.As(err, &ce) || ce.Line != 3 {
		t.Fatalf("err %v", err)
	}
}

// TestConfigFailsClosed: each config that must not start gives a message
// saying what to do.
func TestConfigFailsClosed(t *testing.T) {
	for _, tc := range []struct {
		name, old, new, want string
	}{
		{"tcp without allowlist", `  allow = ["ed25519:0101010101010101010101010101010101010101010101010101010101010101"]`, ``, "no allowlist for tcp://10.0.0.1:26659"},
		{"allow and allow_any", `  addr = "tcp://10.0.0.1:26659"`, "  addr = \"tcp://10.0.0.1:26659\"\n  allow_any = true", "keep one"},
		{"bad protocol", `protocol = "tm2-remote"`, `protocol = "gnokms"`, "want one of cometbft-v0.38"},
		{"bad addr", `addr = "unix:///run/signerkit/v.sock"`, `addr = "/run/v.sock"`, "want tcp://host:port or unix:///path"},
		{"bad allow key", `"AQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQE=",`, `"zz",`, `identity key "zz"`},
		{"no state_dir", `state_dir = "/var/lib/signerkit"`, ``, "state_dir: missing"},
		{"no identity key", `identity_key = "/etc/signerkit/identity.pem"`, ``, "identity_key: missing"},
		{"duplicate chain", `id = "gno-chain"`, `id = "test-chain"`, "listed twice"},
		{"no key", `key = "ledger:"`, `key = ""`, ".key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := strings.Replace(validConfig, tc.old, tc.new, 1)
			if data == validConfig {
				t.Fatal("test edits nothing")
			}
			_, err := ParseConfig([]byte(data))
			var ce *ConfigError
			if !errors.As(err, &ce) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v, want a *ConfigError with %q", err, tc.want)
			}
		})
	}
	// allow_any is accepted, said outright.
	data := strings.Replace(validConfig, `  allow = ["ed25519:0101010101010101010101010101010101010101010101010101010101010101"]`, `  allow_any = true`, 1)
	if _, err := ParseConfig([]byte(data)); err != nil {
		t.Fatal(err)
	}
}

func FuzzParseConfig(f *testing.F) {
	f.Add([]byte(validConfig))
	f.Add([]byte("a = 1\n[[chain]]\nb = \"\"\"\nx\n\"\"\"\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 4096 {
			return
		}
		_, _ = ParseConfig(data)
	})
}
