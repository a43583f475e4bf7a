package inprocess

import (
	"context"
	"crypto"
	"crypto/rsa"
	"fmt"
	"path/filepath"

	"github.com/signerkit/signerkit/signer"
)

// Config says which key file to open. The zero Config names none: Open
// refuses it, and OpenStore returns an empty Store.
type Config struct {
	// File is the path of a key file in a form ParseKeyFile reads: PEM
	// PKCS #8, SEC 1 or PKCS #1, or a priv_validator_key.json. Key files
	// are not encrypted, so nothing unlocks them; keep them readable by
	// their owner alone.
	File string
	// Key says how Open uses the file's key. Key.Algorithm, when set, must
	// fit the key; it picks the scheme of an RSA key, which is RSAPKCS1v15
	// when it is 0. Key.Label and Key.ID are not used: a key file holds one
	// key. OpenStore ignores Key, except that its Algorithm picks the
	// scheme of the file's RSA key as for Open.
	Key signer.KeyRef
}

// Open opens the key in cfg.File as a Signer. Errors wrap
// signer.ErrInvalidArgument for a Config without a file, ErrKeyNotFound
// for a missing file, and otherwise those of LoadKeyFile and
// FromPrivateKey; ctx is only checked on entry, as nothing here blocks.
func Open(ctx context.Context, cfg Config) (*Signer, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("inprocess: %w", err)
	}
	if cfg.File == "" {
		return nil, fmt.Errorf("inprocess: Config.File names no key file: %w", signer.ErrInvalidArgument)
	}
	priv, err := LoadKeyFile(cfg.File)
	if err != nil {
		return nil, err
	}
	defer wipePrivate(priv)
	k, err := FromPrivateKey(priv, algorithmFor(priv, cfg.Key.Algorithm))
	if err != nil {
		return nil, &keyFileError{path: cfg.File, err: err}
	}
	return k, nil
}

// algorithmFor is alg, or for an RSA key with none, RSAPKCS1v15.
func algorithmFor(priv crypto.PrivateKey, alg signer.Algorithm) signer.Algorithm {
	if _, ok := priv.(*rsa.PrivateKey); ok && alg == 0 {
		return signer.RSAPKCS1v15
	}
	return alg
}

// OpenStore returns a Store in process memory. When cfg.File is set, the
// store holds that file's key from the start, labelled with the file's
// base name ("validator.pem") and with ID 0001; otherwise it is empty.
// Keys the store generates or imports live in memory only: nothing is
// written back to the file.
func OpenStore(ctx context.Context, cfg Config) (*Store, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("inprocess: %w", err)
	}
	s := &Store{}
	if cfg.File == "" {
		return s, nil
	}
	priv, err := LoadKeyFile(cfg.File)
	if err != nil {
		return nil, err
	}
	defer wipePrivate(priv)
	if _, err := s.ImportKey(ctx, priv, algorithmFor(priv, cfg.Key.Algorithm), filepath.Base(cfg.File)); err != nil {
		return nil, &keyFileError{path: cfg.File, err: err}
	}
	return s, nil
}

// The attributes of an inprocess: URI.
const (
	attrFile      = "file"
	attrAlgorithm = "algorithm"
)

// ParseURI returns the Config that an inprocess: URI describes:
//
//	inprocess:file=/etc/signerkit/validator.pem
//	inprocess:file=/etc/signerkit/tls.pem;algorithm=rsa-pss
//
// Both attributes are path attributes. file (required) is the key file's
// path, percent-encoded where it holds ';', '?', '&' or '%'; algorithm is
// an algorithm name as signer.ParseAlgorithm takes it (ed25519, p256,
// p384, secp256k1, rsa-pkcs1v15, rsa-pss), which sets Config.Key.Algorithm.
// Key files are not encrypted, so there is no pin-source or pin-value.
// Errors are *signer.URIError values naming the attribute at fault.
func ParseURI(uri string) (Config, error) {
	u, err := signer.ParseURI(uri)
	if err != nil {
		return Config{}, err
	}
	if u.Scheme != "inprocess" {
		return Config{}, &signer.URIError{Scheme: u.Scheme, Problem: "not an inprocess: URI"}
	}
	if err := u.Allow([]string{attrFile, attrAlgorithm}, nil); err != nil {
		return Config{}, err
	}
	var cfg Config
	file, ok := u.Attr(attrFile)
	if !ok || file == "" {
		return Config{}, u.Errorf(attrFile, "is required: the key file's path")
	}
	cfg.File = file
	if name, ok := u.Attr(attrAlgorithm); ok {
		alg, err := signer.ParseAlgorithm(name)
		if err != nil {
			return Config{}, u.Errorf(attrAlgorithm, "%.40q is not an algorithm name such as ed25519 or rsa-pss", name)
		}
		cfg.Key.Algorithm = alg
	}
	return cfg, nil
}

func init() {
	signer.Register("inprocess", func(ctx context.Context, uri string, _ signer.Secret) (signer.Signer, error) {
		cfg, err := ParseURI(uri)
		if err != nil {
			return nil, err
		}
		k, err := Open(ctx, cfg)
		if err != nil {
			return nil, err // not a nil *Signer in a non-nil interface
		}
		return k, nil
	})
}
