// Package pkcs11test makes throwaway SoftHSM2 tokens for tests of code
// that uses package pkcs11, in the manner of net/http/httptest: a token in
// a temporary directory with its own SOFTHSM2_CONF, a known PIN, and the
// SoftHSM2 and OpenSC tools pointed at it.
//
// SoftHSM2 reads SOFTHSM2_CONF when the module is initialized, which
// package pkcs11 does once per process while any token of the module is
// open. So tests that use New must close every pkcs11.Store and
// pkcs11.Signer they open before the test ends, and cannot run in parallel
// (New sets the variable with t.Setenv, which forbids t.Parallel).
//
// Like package pkcs11, it needs cgo to open tokens: without cgo, Available
// says so and New skips the test.
package pkcs11test

import (
	"crypto"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/signerkit/signerkit/pkcs11"
	"github.com/signerkit/signerkit/signer"
)

// Environment variables that steer the tests.
const (
	// EnvModule is the module of the real token EnvURI names, when the
	// URI has no module-path. A path whose file name contains "softhsm"
	// also replaces the SoftHSM2 module of the tests, for systems that keep
	// it elsewhere.
	EnvModule = "SIGNERKIT_PKCS11_MODULE"
	// EnvRequire, when set to anything, turns a missing module or
	// softhsm2-util into a test failure instead of a skip; CI sets it.
	EnvRequire = "SIGNERKIT_REQUIRE_SOFTHSM"
)

// ModulePaths are where SoftHSM2's module is looked for, in order.
var ModulePaths = []string{
	"/usr/lib/softhsm/libsofthsm2.so",                   // Debian, Ubuntu
	"/usr/lib/x86_64-linux-gnu/softhsm/libsofthsm2.so",  // older Debian
	"/usr/lib/aarch64-linux-gnu/softhsm/libsofthsm2.so", // arm64
	"/usr/lib64/pkcs11/libsofthsm2.so",                  // Fedora
	"/usr/local/lib/softhsm/libsofthsm2.so",             // from source
	"/opt/homebrew/lib/softhsm/libsofthsm2.so",          // Homebrew
}

// Module returns the path of the SoftHSM2 module: SIGNERKIT_PKCS11_MODULE
// if it names one, else the first of ModulePaths that exists. It returns ""
// and why when there is none.
func Module() (path, why string) {
	if p := os.Getenv(EnvModule); p != "" && strings.Contains(strings.ToLower(filepath.Base(p)), "softhsm") {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Sprintf("%s=%s: %v", EnvModule, p, err)
		}
		return p, ""
	}
	for _, p := range ModulePaths {
		if _, err := os.Stat(p); err == nil {
			return p, ""
		}
	}
	return "", fmt.Sprintf("no SoftHSM2 module in %s (install the softhsm2 package, or set %s)", strings.Join(ModulePaths, ", "), EnvModule)
}

// Available reports why SoftHSM2 tokens cannot be used here, or "" when
// they can: cgo, the module and softhsm2-util are all needed.
func Available() string {
	if !cgoBuild {
		return "built without cgo, which loading a PKCS#11 module needs"
	}
	if _, why := Module(); why != "" {
		return why
	}
	if _, err := exec.LookPath("softhsm2-util"); err != nil {
		return "softhsm2-util is not on PATH (install the softhsm2 package)"
	}
	return ""
}

// Token is a SoftHSM2 token in a directory of its own.
type Token struct {
	// Module is the path of the SoftHSM2 module.
	Module string
	// Dir holds the configuration and the token store.
	Dir string
	// Conf is the SOFTHSM2_CONF file.
	Conf string
	// Label is the token's label.
	Label string
	// PIN is the user PIN.
	PIN string
	// SOPIN is the security officer's PIN.
	SOPIN string
}

// New makes a token labelled "signerkit" in t.TempDir() and points
// SOFTHSM2_CONF at it for the rest of the test. It skips t when SoftHSM2
// is absent, unless SIGNERKIT_REQUIRE_SOFTHSM is set, in which case it
// fails it.
func New(t testing.TB) *Token {
	t.Helper()
	if why := Available(); why != "" {
		if os.Getenv(EnvRequire) != "" {
			t.Fatalf("SoftHSM2 is required (%s is set): %s", EnvRequire, why)
		}
		t.Skipf("SoftHSM2 not available, skipping (set %s=1 to make this a failure): %s", EnvRequire, why)
	}
	dir := t.TempDir()
	if !confSafe(dir) {
		// t.TempDir is named after the test, and SoftHSM2's configuration
		// parser cuts a line at its first '=' or '#', which benchmark names
		// (backend=…) bring.
		var err error
		if dir, err = os.MkdirTemp("", "signerkit-softhsm-"); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(dir) })
	}
	tok, err := Create(dir, "signerkit")
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("SOFTHSM2_CONF", tok.Conf)
	return tok
}

// Create makes a token labelled label in dir, which must exist, with user
// PIN "1234" and SO PIN "5678". It does not set SOFTHSM2_CONF in this
// process: do so before the module is loaded (see Token.Env).
func Create(dir, label string) (*Token, error) {
	mod, why := Module()
	if why != "" {
		return nil, fmt.Errorf("pkcs11test: %s", why)
	}
	if !confSafe(dir) {
		return nil, fmt.Errorf("pkcs11test: SoftHSM2 cannot take the directory %q in its configuration", dir)
	}
	tok := &Token{
		Module: mod,
		Dir:    dir,
		Conf:   filepath.Join(dir, "softhsm2.conf"),
		Label:  label,
		PIN:    "1234",
		SOPIN:  "5678",
	}
	store := filepath.Join(dir, "tokens")
	if err := os.MkdirAll(store, 0o700); err != nil {
		return nil, fmt.Errorf("pkcs11test: %w", err)
	}
	conf := "directories.tokendir = " + store + "\nobjectstore.backend = file\nlog.level = ERROR\nslots.removable = false\n"
	if err := os.WriteFile(tok.Conf, []byte(conf), 0o600); err != nil {
		return nil, fmt.Errorf("pkcs11test: %w", err)
	}
	if _, err := tok.Util("--init-token", "--free", "--label", label, "--pin", tok.PIN, "--so-pin", tok.SOPIN); err != nil {
		return nil, err
	}
	return tok, nil
}

// Env returns the environment variable that points SoftHSM2 at the token,
// as "SOFTHSM2_CONF=…".
func (tok *Token) Env() string { return "SOFTHSM2_CONF=" + tok.Conf }

// Config returns a pkcs11.Config for the token, with its module, label and
// PIN, for pkcs11.OpenStore; set Key to open a key with pkcs11.Open.
func (tok *Token) Config() pkcs11.Config {
	return pkcs11.Config{
		Module:     tok.Module,
		TokenLabel: tok.Label,
		Secret:     signer.SecretBytes([]byte(tok.PIN)),
	}
}

// URI returns a pkcs11: URI for the key labelled object on the token (the
// token alone when object is empty), with the module path and the PIN as
// pin-value, for signer.Open and pkcs11.ParseURI.
func (tok *Token) URI(object string) string {
	u := pkcs11.URI{Token: tok.Label, Object: object, ModulePath: tok.Module}
	return u.String() + "&pin-value=" + tok.PIN
}

// Util runs softhsm2-util on the token's configuration and returns its
// output.
func (tok *Token) Util(args ...string) ([]byte, error) {
	cmd := exec.Command("softhsm2-util", args...)
	cmd.Env = append(os.Environ(), tok.Env())
	out, err := cmd.CombinedOutput()
	if err != nil {
		return out, fmt.Errorf("pkcs11test: softhsm2-util %s: %v: %s", args[0], err, strings.TrimSpace(string(out)))
	}
	return out, nil
}

// Tool runs OpenSC's pkcs11-tool on the token (logged in with its PIN) and
// returns its output; it returns an error wrapping exec.ErrNotFound when
// pkcs11-tool is not installed.
func (tok *Token) Tool(args ...string) ([]byte, error) {
	path, err := exec.LookPath("pkcs11-tool")
	if err != nil {
		return nil, fmt.Errorf("pkcs11test: pkcs11-tool: %w", err)
	}
	args = append([]string{"--module", tok.Module, "--token-label", tok.Label, "--login", "--pin", tok.PIN}, args...)
	cmd := exec.Command(path, args...)
	cmd.Env = append(os.Environ(), tok.Env())
	out, err := cmd.CombinedOutput()
	if err != nil {
		return out, fmt.Errorf("pkcs11test: pkcs11-tool: %v: %s", err, strings.TrimSpace(string(out)))
	}
	return out, nil
}

// ImportPKCS8 puts priv on the token with softhsm2-util --import, as a
// user would import a PKCS #8 key file, under label and id.
func (tok *Token) ImportPKCS8(priv crypto.PrivateKey, label string, id []byte) error {
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		return fmt.Errorf("pkcs11test: %w", err)
	}
	f, err := os.CreateTemp(tok.Dir, "import-*.pem")
	if err != nil {
		return fmt.Errorf("pkcs11test: %w", err)
	}
	defer os.Remove(f.Name())
	werr := pem.Encode(f, &pem.Block{Type: "PRIVATE KEY", Bytes: der})
	clear(der)
	if err := f.Close(); werr != nil || err != nil {
		return fmt.Errorf("pkcs11test: writing the key file: %v %v", werr, err)
	}
	_, err = tok.Util("--import", f.Name(), "--token", tok.Label, "--label", label, "--id", hex.EncodeToString(id), "--pin", tok.PIN)
	return err
}

// CreateTemp makes a token labelled label in a new temporary directory and
// points SOFTHSM2_CONF at it in this process, for programs and benchmarks
// that have no testing.TB. remove deletes the directory and restores
// SOFTHSM2_CONF; call it once every module user has closed.
func CreateTemp(label string) (tok *Token, remove func(), err error) {
	dir, err := os.MkdirTemp("", "signerkit-softhsm-")
	if err != nil {
		return nil, nil, fmt.Errorf("pkcs11test: %w", err)
	}
	if tok, err = Create(dir, label); err != nil {
		os.RemoveAll(dir)
		return nil, nil, err
	}
	old, had := os.LookupEnv("SOFTHSM2_CONF")
	os.Setenv("SOFTHSM2_CONF", tok.Conf)
	return tok, func() {
		if had {
			os.Setenv("SOFTHSM2_CONF", old)
		} else {
			os.Unsetenv("SOFTHSM2_CONF")
		}
		os.RemoveAll(dir)
	}, nil
}

// confSafe reports whether SoftHSM2's configuration file can name dir.
func confSafe(dir string) bool { return !strings.ContainsAny(dir, "=#\n\r") }
