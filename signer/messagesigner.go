package signer

import (
	"context"
	"crypto"
	"crypto/ed25519"
	"crypto/rsa"
	"fmt"
)

// SignMessage is the crypto.MessageSigner method of every Signer in this
// module: each backend's SignMessage calls it with itself. msg is the
// whole message, as SignContext takes it; opts must ask for what the
// signer's algorithm signs, since a Signer signs with one scheme:
//
//   - Ed25519 and BLS: opts.HashFunc() == 0 (an *ed25519.Options with a
//     Context, or a hash, asks for another scheme);
//   - ECDSA: opts.HashFunc() is the algorithm's hash (SHA-256);
//   - RSA PSS: an *rsa.PSSOptions over SHA-256 whose salt is as long as
//     the hash; RSA PKCS #1 v1.5: SHA-256 and not *rsa.PSSOptions.
//
// Anything else gets an error wrapping ErrUnsupported. rand is ignored.
// It is SignContext with a background context, so it does not return
// before a device answers; use SignContext to bound it.
func SignMessage(s Signer, msg []byte, opts crypto.SignerOpts) ([]byte, error) {
	alg, err := AlgorithmOf(s)
	if err != nil {
		return nil, err
	}
	if err := checkMessageOpts(alg, opts); err != nil {
		return nil, err
	}
	return s.SignContext(context.Background(), msg)
}

func checkMessageOpts(alg Algorithm, opts crypto.SignerOpts) error {
	var h crypto.Hash
	if opts != nil {
		h = opts.HashFunc()
	}
	refuse := func(what string) error {
		return fmt.Errorf("signer: SignMessage with %s on a %v key: %w", what, alg, ErrUnsupported)
	}
	if h != alg.Hash() {
		return refuse(fmt.Sprintf("hash %v", h))
	}
	switch o := opts.(type) {
	case *ed25519.Options:
		if o.Context != "" {
			return refuse("an Ed25519ctx context")
		}
	case *rsa.PSSOptions:
		if alg != RSAPSS {
			return refuse("PSS options")
		}
		if o.SaltLength != rsa.PSSSaltLengthEqualsHash && o.SaltLength != h.Size() {
			return refuse(fmt.Sprintf("PSS salt length %d", o.SaltLength))
		}
		return nil
	}
	if alg == RSAPSS {
		return refuse("no PSS options")
	}
	return nil
}
