// Package keyuri parses what the URIs of the schemes that sign with
// keybase keys, keybase: and gnokeyhome:, have in common: the scheme, the
// path attributes (where the keys are, and a label), and the query
// attributes pin-source or pin-value and mode. Each scheme reads its own
// path attributes, then the mode (keybase.ParseModeAttr) and the secret.
// StoreOpener is the key-store opener that pkcs11: and yubihsm: register.
package keyuri

import "github.com/signerkit/signerkit/signer"

// AttrMode is the query attribute that says when a key is decrypted:
// unlock-once or per-sign.
const AttrMode = "mode"

// Parse parses uri, which must be of scheme and have no other path
// attributes than pathAttrs and no other query attributes than
// pin-source, pin-value and mode. Errors are *signer.URIError values.
func Parse(uri, scheme string, pathAttrs ...string) (*signer.URI, error) {
	u, err := signer.ParseURI(uri)
	if err != nil {
		return nil, err
	}
	if u.Scheme != scheme {
		return nil, &signer.URIError{Scheme: u.Scheme, Problem: "not a " + scheme + ": URI"}
	}
	if err := u.Allow(pathAttrs, []string{signer.AttrPINSource, signer.AttrPINValue, AttrMode}); err != nil {
		return nil, err
	}
	return u, nil
}
