package yubihsm

import (
	"context"

	"github.com/signerkit/signerkit/signer"
)

func init() {
	signer.RegisterStore("yubihsm", func(ctx context.Context, uri string, secret signer.Secret) (signer.Store, signer.KeyRef, error) {
		cfg, err := ParseURI(uri)
		if err != nil {
			return nil, signer.KeyRef{}, err
		}
		if cfg.Secret == nil {
			cfg.Secret = secret
		}
		s, err := OpenStore(ctx, cfg)
		if err != nil {
			return nil, signer.KeyRef{}, err
		}
		return s, cfg.Key, nil
	})
}
