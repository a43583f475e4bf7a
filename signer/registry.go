package signer

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
)

// OpenFunc opens the key that uri names (a URI of the scheme it was
// registered for) and returns its Signer. secret is the caller's Secret,
// or nil: a backend uses it when the URI names no secret of its own
// (pin-source, pin-value). An OpenFunc returns a nil Signer with every
// error.
type OpenFunc func(ctx context.Context, uri string, secret Secret) (Signer, error)

var registry struct {
	sync.RWMutex
	open map[string]OpenFunc
}

// Register makes a URI scheme available to Open, as database/sql.Register
// does for drivers. Backend packages call it from init, so importing one
// (for its side effect alone: import _ "github.com/signerkit/signerkit/pkcs11")
// is enough. Register panics if scheme is registered twice, is not a valid
// scheme name, or open is nil.
func Register(scheme string, open OpenFunc) {
	if open == nil || !schemeName(scheme) || scheme != strings.ToLower(scheme) {
		panic("signer: Register of an invalid scheme or a nil OpenFunc: " + scheme)
	}
	registry.Lock()
	defer registry.Unlock()
	if _, dup := registry.open[scheme]; dup {
		panic("signer: Register called twice for scheme " + scheme)
	}
	if registry.open == nil {
		registry.open = map[string]OpenFunc{}
	}
	registry.open[scheme] = open
}

// Schemes returns the registered URI schemes, sorted.
func Schemes() []string {
	registry.RLock()
	defer registry.RUnlock()
	var s []string
	for k := range registry.open {
		s = append(s, k)
	}
	slices.Sort(s)
	return s
}

// Open opens the one key that uri names and returns its Signer, which the
// caller closes. The scheme picks the backend, which must be registered
// (imported); the rest says which key and how to unlock it, for example
//
//	inprocess:file=/etc/signerkit/validator.pem
//	keybase:dir=/var/lib/gnokey;label=validator?pin-source=env:GNOKEY_PASS
//	ledger:hid=/dev/hidraw3;chunk-size=250
//	yubihsm:connector=http://127.0.0.1:12345;auth-key=1;id=0x0a01?pin-source=/run/secrets/hsm
//	pkcs11:token=validator;object=consensus?module-path=/usr/lib/softhsm/libsofthsm2.so&pin-source=env:PIN
//
// Each backend's package doc lists its attributes. Errors wrap
// ErrInvalidArgument for a URI that cannot be used (through *URIError,
// naming the attribute), ErrUnsupported for a scheme that no imported
// package registered, and otherwise whatever the backend's open returns.
func Open(ctx context.Context, uri string) (Signer, error) {
	return OpenSecret(ctx, uri, nil)
}

// OpenSecret is Open with a Secret to use when the URI names none, such as
// a passphrase the caller prompted for.
func OpenSecret(ctx context.Context, uri string, secret Secret) (Signer, error) {
	i := strings.IndexByte(uri, ':')
	if i <= 0 || !schemeName(uri[:i]) {
		return nil, &URIError{Problem: "does not start with a scheme such as pkcs11: or keybase:"}
	}
	scheme := strings.ToLower(uri[:i])
	registry.RLock()
	open := registry.open[scheme]
	registry.RUnlock()
	if open == nil {
		return nil, &URIError{Scheme: scheme, Unsupported: true,
			Problem: fmt.Sprintf("not a key scheme this program knows; it knows %s (a Go program adds schemes by importing backend packages)", strings.Join(Schemes(), ", "))}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s, err := open(ctx, uri, secret)
	if err != nil {
		return nil, err
	}
	return s, nil
}
