package daemon

import (
	"bytes"
	"crypto/ed25519"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/signerkit/signerkit/internal/tomlline"
	"github.com/signerkit/signerkit/privval"
)

// Protocols a chain may name in its protocol key.
const (
	// ProtocolCometBFT038 is CometBFT v0.38's privval protocol: the node
	// listens (priv_validator_laddr) and signerkit dials it.
	ProtocolCometBFT038 = "cometbft-v0.38"
	// ProtocolCometBFT034 is Tendermint/CometBFT v0.34's.
	ProtocolCometBFT034 = "cometbft-v0.34"
	// ProtocolTM2TMKMS is the v0.34 protocol as gno v1.7.1's
	// tmkms_listener speaks it, with tm2 sign bytes: the node listens and
	// signerkit dials it.
	ProtocolTM2TMKMS = "tm2-tmkms"
	// ProtocolTM2Remote is gno's native remote-signer protocol: the node
	// (remote_signer) dials signerkit, which listens.
	ProtocolTM2Remote = "tm2-remote"
)

// Protocols lists the protocol names a chain may take.
func Protocols() []string {
	return []string{ProtocolCometBFT038, ProtocolCometBFT034, ProtocolTM2TMKMS, ProtocolTM2Remote}
}

// Defaults of the daemon's settings.
const (
	DefaultShutdownGrace = 10 * time.Second
	DefaultSignTimeout   = privval.DefaultRequestTimeout
)

// Config is a signerkit.toml: where the state and identity key are, the
// HTTP address for metrics and health, and the chains to sign for.
type Config struct {
	// StateDir holds one double-sign state file per chain (package guard)
	// and the public key bound to each chain. Required.
	StateDir string `toml:"state_dir"`
	// State, when set, keeps the double-sign state in etcd instead of
	// StateDir, shared by the signers of the same key on several hosts:
	// "etcd://host:port,…/prefix?ca=FILE&cert=FILE&key=FILE"
	// (etcdstore.ParseURL; docs/ha.md). StateDir still holds the key
	// bindings and in-flight markers of this host.
	State string `toml:"state"`
	// IdentityKey is the file of the signer's Ed25519 identity key, which
	// proves who signerkit is in every SecretConnection (TCP). Required
	// when any validator is reached over TCP.
	IdentityKey string `toml:"identity_key"`
	// MetricsAddr is where /metrics, /healthz and /readyz are served
	// (host:port). Empty serves nothing.
	MetricsAddr string `toml:"metrics_addr"`
	// ShutdownGrace bounds how long SIGTERM waits for signs in flight.
	// Zero means DefaultShutdownGrace.
	ShutdownGrace time.Duration `toml:"shutdown_grace"`
	// LogLevel is debug, info (default), warn or error; LogFormat text
	// (default) or json.
	LogLevel  string `toml:"log_level"`
	LogFormat string `toml:"log_format"`
	// MaxPendingHandshakes caps, on each tm2-remote TCP listener, the
	// connections accepted and not yet past their SecretConnection
	// handshake (in it, or held after it failed). A connection beyond
	// the cap is not queued: at once, the pending connection least likely
	// to be the validator's is closed (one that failed its handshake, then
	// one that has sent nothing, the oldest first). Zero means
	// DefaultMaxPendingHandshakes; either way the cap is lowered so that
	// the listeners' pending connections take at most half of the
	// open-file limit (RLIMIT_NOFILE) less 64.
	MaxPendingHandshakes int `toml:"max_pending_handshakes"`
	// MaxPendingHandshakesPerHost caps, the same way, the pending
	// connections from one source: an IPv4 address, an IPv6 /64. Zero
	// means DefaultMaxPendingHandshakesPerHost.
	MaxPendingHandshakesPerHost int `toml:"max_pending_handshakes_per_host"`
	// RedialMaxBackoff caps the wait between dials of a validator that
	// signerkit dials (cometbft-*, tm2-tmkms): after a failed dial the
	// wait doubles from 100 ms up to this cap (with jitter, between half
	// of it and all of it). Zero means DefaultRedialMaxBackoff.
	RedialMaxBackoff time.Duration `toml:"redial_max_backoff"`
	// Chains are the chains signed for, one key each.
	Chains []ChainConfig `toml:"chain"`

	// Path is the file the Config was read from, if any.
	Path string `toml:"-"`
}

// ChainConfig is one [[chain]].
type ChainConfig struct {
	// ID is the chain id. Requests for another are refused.
	ID string `toml:"id"`
	// Protocol is one of Protocols().
	Protocol string `toml:"protocol"`
	// Key is the validator key as a signerkit URI (inprocess:, keybase:,
	// gnokeyhome:, ledger:, yubihsm:, pkcs11:).
	Key string `toml:"key"`
	// SignTimeout bounds one request, guard and backend included. Zero
	// means DefaultSignTimeout.
	SignTimeout time.Duration `toml:"sign_timeout"`
	// Validators are the nodes (or sentries) to serve.
	Validators []ValidatorConfig `toml:"validator"`
}

// ValidatorConfig is one [[chain.validator]].
type ValidatorConfig struct {
	// Addr is tcp://host:port or unix:///path: the node's listener that
	// signerkit dials (cometbft-*, tm2-tmkms), or, for tm2-remote, the
	// address signerkit listens on for the node to dial.
	Addr string `toml:"addr"`
	// Allow lists the node identity keys accepted over TCP, each as gno
	// prints it ("gpub1…"), as "ed25519:<hex|base64>", as bare hex or
	// base64, or as the path of the node's node_key.json (CometBFT's or
	// gno's; ParseIdentityKey). SIGHUP reloads it.
	Allow []string `toml:"allow"`
	// AllowAny accepts any node identity over TCP. It exists for stock
	// CometBFT nodes, which make a new identity at every start; prefer a
	// Unix socket or an allowlist.
	AllowAny bool `toml:"allow_any"`
}

// Network returns "tcp" or "unix" and the address without its scheme.
func (v ValidatorConfig) Network() (network, address string, err error) {
	switch {
	case strings.HasPrefix(v.Addr, "tcp://"):
		return "tcp", strings.TrimPrefix(v.Addr, "tcp://"), nil
	case strings.HasPrefix(v.Addr, "unix://"):
		return "unix", strings.TrimPrefix(v.Addr, "unix://"), nil
	}
	return "", "", fmt.Errorf("addr %q: want tcp://host:port or unix:///path", v.Addr)
}

// AllowKeys parses Allow.
func (v ValidatorConfig) AllowKeys() ([]ed25519.PublicKey, error) {
	keys := make([]ed25519.PublicKey, 0, len(v.Allow))
	for i, s := range v.Allow {
		k, err := ParseIdentityKey(s)
		if err != nil {
			return nil, fmt.Errorf("entry %d: %w", i+1, err)
		}
		keys = append(keys, k)
	}
	return keys, nil
}

// ConfigError is a config file that cannot be used. Line is the line of
// the offending key when known, else 0.
type ConfigError struct {
	Path string
	Line int
	Key  string
	Msg  string
}

func (e *ConfigError) Error() string {
	var b strings.Builder
	b.WriteString("signerkit: config")
	if e.Path != "" {
		b.WriteString(" " + e.Path)
	}
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
	}
	if e.Key != "" {
		fmt.Fprintf(&b, ": %s", e.Key)
	}
	b.WriteString(": " + e.Msg)
	return b.String()
}

// parsedValidator is a [[chain.validator]]'s addr and allowlist as check
// parsed them.
type parsedValidator struct {
	network, address string
	allow            []ed25519.PublicKey // nil: any (allow_any)
}

// parsedConfig is what check parsed of a Config: by chain, by validator,
// in config order.
type parsedConfig [][]parsedValidator

// LoadConfig reads and checks the config file at path.
func LoadConfig(path string) (*Config, error) {
	cfg, _, err := loadConfig(path, false)
	return cfg, err
}

// loadConfig is LoadConfig, also returning what check parsed; inspect
// skips the checks only serving needs (see LoadConfigToInspect).
func loadConfig(path string, inspect bool) (*Config, parsedConfig, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, fmt.Errorf("signerkit: config: %w", err)
	}
	cfg, pc, err := parseConfig(data, inspect)
	if err != nil {
		var ce *ConfigError
		if errors.As(err, &ce) {
			ce.Path = path
		}
		return nil, nil, err
	}
	cfg.Path = path
	return cfg, pc, nil
}

// ParseConfig parses and checks a config file's contents. A key the
// Config does not know is a *ConfigError naming the key and its line.
func ParseConfig(data []byte) (*Config, error) {
	cfg, _, err := parseConfig(data, false)
	return cfg, err
}

func parseConfig(data []byte, inspect bool) (*Config, parsedConfig, error) {
	var cfg Config
	md, err := toml.NewDecoder(bytes.NewReader(data)).Decode(&cfg)
	if err != nil {
		if line, key, msg, ok := tomlline.ParseError(data, err); ok {
			return nil, nil, &ConfigError{Line: line, Key: key, Msg: msg}
		}
		return nil, nil, &ConfigError{Msg: err.Error()}
	}
	if und := md.Undecoded(); len(und) > 0 {
		k := und[0]
		return nil, nil, &ConfigError{Line: tomlline.KeyLine(data, k, func() any { return new(Config) }), Key: k.String(),
			Msg: "unknown key (misspelt, or in the wrong table?); see `signerkit init` for a commented config"}
	}
	pc, err := cfg.check(inspect)
	if err != nil {
		return nil, nil, err
	}
	return &cfg, pc, nil
}

// check applies the rules a config must meet before anything starts, and
// returns the validators' addresses and allowlists it parsed doing so.
func (c *Config) check(inspect bool) (parsedConfig, error) {
	bad := func(key, format string, args ...any) error {
		return &ConfigError{Key: key, Msg: fmt.Sprintf(format, args...)}
	}
	if c.StateDir == "" {
		return nil, bad("state_dir", "missing: set state_dir to the directory of the double-sign state (signerkit init makes one)")
	}
	if len(c.Chains) == 0 {
		return nil, bad("chain", "no [[chain]]: add one with id, protocol, key and at least one [[chain.validator]]")
	}
	switch c.LogLevel {
	case "", "debug", "info", "warn", "error":
	default:
		return nil, bad("log_level", "%q: want debug, info, warn or error", c.LogLevel)
	}
	switch c.LogFormat {
	case "", "text", "json":
	default:
		return nil, bad("log_format", "%q: want text or json", c.LogFormat)
	}
	if c.ShutdownGrace < 0 {
		return nil, bad("shutdown_grace", "negative")
	}
	if c.MaxPendingHandshakes < 0 {
		return nil, bad("max_pending_handshakes", "negative (0 means the default, %d)", DefaultMaxPendingHandshakes)
	}
	if c.RedialMaxBackoff < 0 {
		return nil, bad("redial_max_backoff", "negative (0 means the default, %s)", DefaultRedialMaxBackoff)
	}
	if c.MaxPendingHandshakesPerHost < 0 {
		return nil, bad("max_pending_handshakes_per_host", "negative (0 means the default, %d)", DefaultMaxPendingHandshakesPerHost)
	}
	seen := map[string]bool{}
	tcp := false
	pc := make(parsedConfig, len(c.Chains))
	for i, ch := range c.Chains {
		key := fmt.Sprintf("chain[%d]", i)
		if ch.ID == "" {
			return nil, bad(key+".id", "missing: set the chain id the validator runs")
		}
		key = fmt.Sprintf("chain %q", ch.ID)
		if seen[ch.ID] {
			return nil, bad(key, "listed twice: one [[chain]] per chain id")
		}
		seen[ch.ID] = true
		if !slices.Contains(Protocols(), ch.Protocol) {
			return nil, bad(key+".protocol", "%q: want one of %s", ch.Protocol, strings.Join(Protocols(), ", "))
		}
		if ch.Key == "" || !strings.Contains(ch.Key, ":") {
			return nil, bad(key+".key", "%q: want a signerkit key URI such as ledger: or keybase:dir=…;label=…", ch.Key)
		}
		if ch.SignTimeout < 0 {
			return nil, bad(key+".sign_timeout", "negative")
		}
		if len(ch.Validators) == 0 {
			return nil, bad(key+".validator", "none: add a [[chain.validator]] with addr")
		}
		pc[i] = make([]parsedValidator, len(ch.Validators))
		for j, v := range ch.Validators {
			vk := fmt.Sprintf("%s.validator[%d]", key, j)
			network, address, err := v.Network()
			if err != nil {
				return nil, bad(vk+".addr", "%v", err)
			}
			allow, err := v.AllowKeys()
			if err != nil {
				return nil, bad(vk+".allow", "%v", err)
			}
			if v.AllowAny {
				allow = nil
			}
			pc[i][j] = parsedValidator{network: network, address: address, allow: allow}
			if network == "tcp" {
				tcp = true
				if len(v.Allow) == 0 && !v.AllowAny && !inspect {
					return nil, bad(vk+".allow", "no allowlist for %s: over TCP signerkit serves only the node identity keys listed here. "+
						"Add allow = [\"<the node's identity key: gpub1…, ed25519:<hex>, or the path of its node_key.json>\"] (a refused node's key is logged), "+
						"or use a unix:// address, or, for a stock CometBFT node that makes a new identity at every start, set allow_any = true", v.Addr)
				}
				if len(v.Allow) > 0 && v.AllowAny {
					return nil, bad(vk+".allow_any", "allow_any = true with an allowlist: keep one")
				}
			}
		}
	}
	if tcp && c.IdentityKey == "" && !inspect {
		return nil, bad("identity_key", "missing, and a validator is reached over TCP: set identity_key to the file `signerkit init` wrote")
	}
	return pc, nil
}

func (c *Config) shutdownGrace() time.Duration {
	if c.ShutdownGrace == 0 {
		return DefaultShutdownGrace
	}
	return c.ShutdownGrace
}

func (ch *ChainConfig) dialect() privval.Dialect {
	switch ch.Protocol {
	case ProtocolCometBFT034:
		return privval.V034
	case ProtocolTM2TMKMS:
		return privval.GnoTMKMS
	}
	return privval.V038
}

// PathOrDefault is the config's file for messages that tell the operator
// what to run: Path, or signerkit.toml when the config was not read from
// a file.
func (c *Config) PathOrDefault() string {
	if c.Path != "" {
		return c.Path
	}
	return "signerkit.toml"
}
