package keybase

import (
	"context"

	"github.com/signerkit/signerkit/signer"
)

func init() {
	signer.RegisterStore("keybase", func(ctx context.Context, uri string) (signer.Store, signer.KeyRef, error) {
		cfg, err := ParseURI(uri)
		if err != nil {
			// A store needs only its directory: a URI to list one's
			// keys may name no label.
			u, uerr := signer.ParseURI(uri)
			dir, ok := "", false
			if uerr == nil {
				dir, ok = u.Attr(attrDir)
			}
			if !ok || dir == "" {
				return nil, signer.KeyRef{}, err
			}
			cfg = Config{Dir: dir}
		}
		s, err := OpenStore(ctx, cfg)
		if err != nil {
			return nil, signer.KeyRef{}, err
		}
		return s, cfg.Key, nil
	})
}
