package bls

import (
	"context"
	"fmt"

	"github.com/signerkit/signerkit/signer"
)

// KeyGen says how Open turns Config.Secret into a key.
type KeyGen uint8

const (
	// KeyGenIETF runs the IETF draft's KeyGen on the secret, which must
	// be at least 32 bytes (FromSeed). It is the zero value.
	KeyGenIETF KeyGen = iota
	// KeyGenCometBFT derives the key as CometBFT's GenPrivKeyFromSecret
	// does (FromCometBFTSecret).
	KeyGenCometBFT
)

// Config says which key Open opens: the key in File, or else the key that
// Secret derives. The zero Config names none, and Open refuses it.
type Config struct {
	// File is the path of a CometBFT priv_validator_key.json that holds a
	// bls12_381 key (see ParseKeyFile). Key files are not encrypted: keep
	// them readable by their owner alone.
	File string
	// Secret, used when File is empty, returns the secret the key is
	// derived from, as KeyGen says. Open wipes what it returns.
	Secret signer.Secret
	// KeyGen says how Secret becomes a key; the zero value is KeyGenIETF.
	KeyGen KeyGen
	// Key.Algorithm is the algorithm the Signer uses: BLS12381MinPK (also
	// when 0) or BLS12381MinSig. Key.Label and Key.ID are not used.
	Key signer.KeyRef
}

// Open opens the key cfg names. Errors wrap signer.ErrInvalidArgument for a
// Config that names no key, and otherwise those of LoadKeyFile, the
// Secret, FromSeed and FromCometBFTSecret; ctx is only checked on entry,
// as nothing here blocks.
func Open(ctx context.Context, cfg Config) (*Signer, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("bls: %w", err)
	}
	alg := cfg.Key.Algorithm
	if alg == 0 {
		alg = signer.BLS12381MinPK
	}
	if err := checkAlgorithm(alg); err != nil {
		return nil, err
	}
	switch {
	case cfg.File != "":
		return LoadKeyFile(cfg.File, alg)
	case cfg.Secret != nil:
		secret, err := cfg.Secret()
		defer clear(secret)
		if err != nil {
			return nil, fmt.Errorf("bls: secret: %w", err)
		}
		switch cfg.KeyGen {
		case KeyGenIETF:
			return FromSeed(secret, alg)
		case KeyGenCometBFT:
			return FromCometBFTSecret(secret, alg)
		}
		return nil, fmt.Errorf("bls: Config.KeyGen %d is not a KeyGen: %w", cfg.KeyGen, signer.ErrInvalidArgument)
	}
	return nil, fmt.Errorf("bls: Config names no key (neither File nor Secret): %w", signer.ErrInvalidArgument)
}

// The attributes of a bls: URI.
const (
	attrFile      = "file"
	attrAlgorithm = "algorithm"
	attrKeyGen    = "keygen"
)

// ParseURI returns the Config that a bls: URI describes:
//
//	bls:file=/etc/cometbft/priv_validator_key.json
//	bls:algorithm=bls12381-minsig?pin-source=env:BLS_SEED
//	bls:keygen=cometbft?pin-source=/run/secrets/bls-secret
//
// Path attributes: file, the key file's path; algorithm,
// bls12381-minpk (the default) or bls12381-minsig; keygen, ietf (the
// default) or cometbft, how the secret becomes a key. Without file, the
// key is derived from the secret that pin-source (or pin-value) gives, or
// failing that the Secret passed to signer.OpenSecret; ParseURI leaves
// Config.Secret nil when the URI names none. Errors are *signer.URIError
// values naming the attribute at fault.
func ParseURI(uri string) (Config, error) {
	u, err := signer.ParseURI(uri)
	if err != nil {
		return Config{}, err
	}
	if u.Scheme != "bls" {
		return Config{}, &signer.URIError{Scheme: u.Scheme, Problem: "not a bls: URI"}
	}
	if err := u.Allow([]string{attrFile, attrAlgorithm, attrKeyGen}, []string{signer.AttrPINSource, signer.AttrPINValue}); err != nil {
		return Config{}, err
	}
	var cfg Config
	if file, ok := u.Attr(attrFile); ok {
		if file == "" {
			return Config{}, u.Errorf(attrFile, "is empty: give the key file's path")
		}
		cfg.File = file
	}
	if name, ok := u.Attr(attrAlgorithm); ok {
		alg, err := signer.ParseAlgorithm(name)
		if err != nil || !alg.IsBLS() {
			return Config{}, u.Errorf(attrAlgorithm, "%.40q is not bls12381-minpk or bls12381-minsig", name)
		}
		cfg.Key.Algorithm = alg
	}
	if kg, ok := u.Attr(attrKeyGen); ok {
		switch kg {
		case "ietf":
			cfg.KeyGen = KeyGenIETF
		case "cometbft":
			cfg.KeyGen = KeyGenCometBFT
		default:
			return Config{}, u.Errorf(attrKeyGen, "%.40q is not ietf or cometbft", kg)
		}
	}
	if cfg.Secret, err = u.Secret(); err != nil {
		return Config{}, err
	}
	if cfg.File != "" && cfg.Secret != nil {
		return Config{}, u.Errorf(attrFile, "and a secret both name a key: key files are not encrypted, so give one or the other")
	}
	return cfg, nil
}

func init() {
	signer.Register("bls", func(ctx context.Context, uri string, secret signer.Secret) (signer.Signer, error) {
		cfg, err := ParseURI(uri)
		if err != nil {
			return nil, err
		}
		if cfg.File == "" && cfg.Secret == nil {
			cfg.Secret = secret
		}
		k, err := Open(ctx, cfg)
		if err != nil {
			return nil, err // not a nil *Signer in a non-nil interface
		}
		return k, nil
	})
}
