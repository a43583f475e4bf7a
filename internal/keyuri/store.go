package keyuri

import (
	"context"

	"github.com/signerkit/signerkit/signer"
)

// StoreOpener is the signer.OpenStoreFunc of a backend whose URIs parse
// into a config C (parse) that opens a store (open) and names a key in it
// (key): it parses the URI, opens the store, and returns it with the key
// the URI names.
func StoreOpener[C any, S signer.Store](parse func(string) (C, error), key func(*C) signer.KeyRef,
	open func(context.Context, C) (S, error)) signer.OpenStoreFunc {
	return func(ctx context.Context, uri string) (signer.Store, signer.KeyRef, error) {
		cfg, err := parse(uri)
		if err != nil {
			return nil, signer.KeyRef{}, err
		}
		s, err := open(ctx, cfg)
		if err != nil {
			return nil, signer.KeyRef{}, err
		}
		return s, key(&cfg), nil
	}
}
