package pkcs11test

import (
	"fmt"
	"os"

	"github.com/signerkit/signerkit/pkcs11"
	"github.com/signerkit/signerkit/signer"
)

// Environment variables that name a real token's key for the opt-in
// tests and benchmark rows.
const (
	// EnvURI is an RFC 7512 URI of the key, e.g.
	// pkcs11:token=YubiHSM;object=signerkit-test.
	EnvURI = "SIGNERKIT_PKCS11_URI"
	// EnvPIN is the token's PIN, when the URI has no pin-source or
	// pin-value.
	EnvPIN = "SIGNERKIT_PKCS11_PIN"
)

// RealToken returns the Config of the key that SIGNERKIT_PKCS11_URI names,
// for pkcs11.Open, with the module from the URI's module-path or
// SIGNERKIT_PKCS11_MODULE and the PIN from the URI or SIGNERKIT_PKCS11_PIN.
// ok is false when the variable is unset.
func RealToken() (cfg pkcs11.Config, ok bool, err error) {
	uri := os.Getenv(EnvURI)
	if uri == "" {
		return pkcs11.Config{}, false, nil
	}
	if cfg, err = pkcs11.ParseURI(uri); err != nil {
		return pkcs11.Config{}, true, err
	}
	if cfg.Module == "" {
		cfg.Module = os.Getenv(EnvModule)
	}
	if cfg.Module == "" {
		return pkcs11.Config{}, true, fmt.Errorf("pkcs11test: %s has no module-path and %s is unset", EnvURI, EnvModule)
	}
	if pin := os.Getenv(EnvPIN); cfg.Secret == nil && pin != "" {
		cfg.Secret = signer.SecretBytes([]byte(pin))
	}
	if cfg.Key.Label == "" && cfg.Key.ID == "" {
		return pkcs11.Config{}, true, fmt.Errorf("pkcs11test: %s names no key: add object= or id=", EnvURI)
	}
	return cfg, true, nil
}
