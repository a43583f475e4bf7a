package daemon

import (
	"crypto/ed25519"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/signerkit/signerkit/keyfmt"
)

// ParseIdentityKey reads a node's Ed25519 identity key as an allow entry
// gives it: as gno prints keys ("gpub1…"), as "ed25519:<hex|base64>" (as
// signerkit logs a refused peer), as bare hex or standard base64 (as
// CometBFT's JSON shows keys), or as the path of the node's node_key.json,
// CometBFT's or gno's, of which only the public key is kept. A relative
// path is taken from the working directory. The error says which of
// these s was taken for and what was wrong; it wraps keyfmt.ErrFormat for
// a key, or the file's error for a path.
func ParseIdentityKey(s string) (ed25519.PublicKey, error) {
	k, err := keyfmt.ParsePublicKey(s)
	if err == nil {
		return k, nil
	}
	t := strings.TrimSpace(s)
	if !looksLikePath(t) {
		return nil, fmt.Errorf("identity %w (or the path of a node_key.json)", err)
	}
	k, _, perr := keyfmt.LoadNodeKey(t)
	switch {
	case perr == nil:
		return k, nil
	case errors.Is(perr, fs.ErrNotExist):
		return nil, fmt.Errorf("identity key %q: not a key, and no such node_key.json: %w", s, perr)
	}
	return nil, fmt.Errorf("identity key file: %w", perr)
}

// looksLikePath says whether an allow entry that is no key names a file.
func looksLikePath(s string) bool {
	if strings.ContainsRune(s, os.PathSeparator) || strings.HasSuffix(s, ".json") {
		return true
	}
	_, err := os.Stat(s)
	return err == nil
}

// LoadConfigToInspect reads the config file at path as LoadConfig does,
// but without the checks that only serving needs: a TCP validator with
// no allowlist yet, and no identity_key. The commands that only read
// (keys show, state show, identity show) use it, so that they work on the
// config `signerkit init` writes before the node's identity is known.
// Start still refuses such a config.
func LoadConfigToInspect(path string) (*Config, error) {
	cfg, _, err := loadConfig(path, true)
	return cfg, err
}
