package signer

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
)

// A Store is a key store that a URI names: a keybase directory, a
// token, an HSM. What it can do — KeyLister, KeyGenerator, KeyImporter,
// KeyDeleter — callers find by type assertion.
type Store interface {
	io.Closer
}

// OpenStoreFunc opens the store that uri (of the scheme it was registered
// for) names, and returns it with the key the URI names in it: zero when
// the URI names none, as a URI given to list a store's keys may not.
// The URI carries the secret, if the store needs one (pin-source).
type OpenStoreFunc func(ctx context.Context, uri string) (Store, KeyRef, error)

var stores struct {
	sync.RWMutex
	open map[string]OpenStoreFunc
}

// RegisterStore makes a URI scheme available to OpenStore, as Register
// does for Open. Backend packages call it from init. It panics if scheme
// is registered twice, is not a valid scheme name, or open is nil.
func RegisterStore(scheme string, open OpenStoreFunc) {
	if open == nil || !schemeName(scheme) || scheme != strings.ToLower(scheme) {
		panic("signer: RegisterStore of an invalid scheme or a nil OpenStoreFunc: " + scheme)
	}
	stores.Lock()
	defer stores.Unlock()
	if _, dup := stores.open[scheme]; dup {
		panic("signer: RegisterStore called twice for scheme " + scheme)
	}
	if stores.open == nil {
		stores.open = map[string]OpenStoreFunc{}
	}
	stores.open[scheme] = open
}

// StoreSchemes returns the URI schemes registered with RegisterStore,
// sorted.
func StoreSchemes() []string {
	stores.RLock()
	defer stores.RUnlock()
	var s []string
	for k := range stores.open {
		s = append(s, k)
	}
	slices.Sort(s)
	return s
}

// OpenStore opens the key store that uri names, with the key it names in
// it (see OpenStoreFunc). The caller closes the store. Errors are those
// of Open: an unregistered scheme is a *URIError wrapping
// ErrUnsupported.
func OpenStore(ctx context.Context, uri string) (Store, KeyRef, error) {
	i := strings.IndexByte(uri, ':')
	if i <= 0 || !schemeName(uri[:i]) {
		return nil, KeyRef{}, &URIError{Problem: "does not start with a scheme such as pkcs11: or keybase:"}
	}
	scheme := strings.ToLower(uri[:i])
	stores.RLock()
	open := stores.open[scheme]
	stores.RUnlock()
	if open == nil {
		return nil, KeyRef{}, &URIError{Scheme: scheme, Unsupported: true,
			Problem: fmt.Sprintf("keys of this scheme are not managed by this program; it manages %s keys (a Go program adds schemes by importing backend packages)", strings.Join(StoreSchemes(), ", "))}
	}
	if err := ctx.Err(); err != nil {
		return nil, KeyRef{}, err
	}
	return open(ctx, uri)
}
