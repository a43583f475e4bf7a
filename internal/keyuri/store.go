package keyuri

import (
	"context"

	"github.com/signerkit/signerkit/signer"
)

// StoreOpener is the signer.OpenStoreFunc of a backend whose URIs parse
// into a config C (parse), which carries a secret and a key reference
// (fields returns pointers to both) and opens a store (open): it parses
// the URI, gives the config the caller's secret when the URI names none,
// and opens the store, returning it with the key the URI names.
func StoreOpener[C any, S signer.Store](parse func(string) (C, error), fields func(*C) (*signer.Secret, *signer.KeyRef),
	open func(context.Context, C) (S, error)) signer.OpenStoreFunc {
	return func(ctx context.Context, uri string, secret signer.Secret) (signer.Store, signer.KeyRef, error) {
		cfg, err := parse(uri)
		if err != nil {
			return nil, signer.KeyRef{}, err
		}
		sec, key := fields(&cfg)
		if *sec == nil {
			*sec = secret
		}
		s, err := open(ctx, cfg)
		if err != nil {
			return nil, signer.KeyRef{}, err
		}
		return s, *key, nil
	}
}
