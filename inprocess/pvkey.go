package inprocess

import (
	"bytes"
	"crypto"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/signerkit/signerkit/internal/eckey"
	"github.com/signerkit/signerkit/signer"
)

// validatorKey is a priv_validator_key.json as CometBFT and gno (tm2)
// write it; the address is not read.
type validatorKey struct {
	PubKey  *typedValue `json:"pub_key"`
	PrivKey *typedValue `json:"priv_key"`
}

// typedValue is a key in either JSON form: CometBFT's {"type": …,
// "value": base64} or tm2 amino's {"@type": …, "value": base64}.
type typedValue struct {
	Type   string `json:"type"`
	AtType string `json:"@type"`
	Value  []byte `json:"value"`
}

// The key types of a priv_validator_key.json, in CometBFT's and tm2's
// names, with the algorithm each holds.
var validatorKeyTypes = map[string]struct {
	alg     signer.Algorithm
	private bool
}{
	"tendermint/PrivKeyEd25519":   {signer.Ed25519, true},
	"/tm.PrivKeyEd25519":          {signer.Ed25519, true},
	"tendermint/PrivKeySecp256k1": {signer.ECDSASecp256k1, true},
	"/tm.PrivKeySecp256k1":        {signer.ECDSASecp256k1, true},
	"tendermint/PubKeyEd25519":    {signer.Ed25519, false},
	"/tm.PubKeyEd25519":           {signer.Ed25519, false},
	"tendermint/PubKeySecp256k1":  {signer.ECDSASecp256k1, false},
	"/tm.PubKeySecp256k1":         {signer.ECDSASecp256k1, false},
}

// algorithm returns the algorithm of v, which must be a private key
// (private) or a public key.
func (v *typedValue) algorithm(field string, private bool) (signer.Algorithm, error) {
	if v == nil {
		return 0, corrupt("no %s", field)
	}
	typ := v.Type
	switch {
	case typ == "":
		typ = v.AtType
	case v.AtType != "" && v.AtType != typ:
		return 0, corrupt("%s has both type and @type", field)
	}
	kt, ok := validatorKeyTypes[typ]
	if !ok || kt.private != private {
		return 0, fmt.Errorf("%s of type %.64q: %w", field, typ, signer.ErrUnsupported)
	}
	return kt.alg, nil
}

// parseValidatorKey reads a priv_validator_key.json.
func parseValidatorKey(data []byte) (crypto.PrivateKey, error) {
	var f validatorKey
	err := json.Unmarshal(data, &f)
	if f.PrivKey != nil {
		defer clear(f.PrivKey.Value)
	}
	if err != nil {
		// json's errors may quote a character of the file: say where only.
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return nil, corrupt("priv_validator_key.json: bad JSON at byte %d", se.Offset)
		}
		return nil, corrupt("priv_validator_key.json: not a validator key (want pub_key and priv_key, each a type and a base64 value)")
	}
	alg, err := f.PrivKey.algorithm("priv_key", true)
	if err != nil {
		return nil, fmt.Errorf("priv_validator_key.json: %w", err)
	}
	pubAlg, err := f.PubKey.algorithm("pub_key", false)
	if err != nil {
		return nil, fmt.Errorf("priv_validator_key.json: %w", err)
	}
	if pubAlg != alg {
		return nil, fmt.Errorf("priv_validator_key.json: pub_key is %v, priv_key %v: %w", pubAlg, alg, signer.ErrInvalidKey)
	}
	var priv crypto.PrivateKey
	var pub []byte // the public key in the form the file writes it
	switch v := f.PrivKey.Value; alg {
	case signer.Ed25519:
		if len(v) != ed25519.PrivateKeySize {
			return nil, corrupt("priv_validator_key.json: Ed25519 priv_key of %d bytes, want %d", len(v), ed25519.PrivateKeySize)
		}
		if err := signer.CheckEd25519PublicKey(f.PubKey.Value); err != nil {
			return nil, fmt.Errorf("priv_validator_key.json: pub_key: %w", err)
		}
		k, err := ownEd25519(v) // checks the seed against the public half
		if err != nil {
			return nil, fmt.Errorf("priv_validator_key.json: %w", unprefixed{err})
		}
		priv, pub = k, k[ed25519.SeedSize:] // a copy of its own, handed to the caller
	default:
		if len(v) != 32 {
			return nil, corrupt("priv_validator_key.json: secp256k1 priv_key of %d bytes, want 32", len(v))
		}
		k, err := ecdsaFromScalar(v, alg)
		if err != nil {
			return nil, fmt.Errorf("priv_validator_key.json: %w", unprefixed{err})
		}
		priv = k
		if pub, err = signer.MarshalSecp256k1PublicKey(&k.PublicKey); err != nil { // cannot fail: k is valid
			wipe(eckey.Scalar(k))
			return nil, fmt.Errorf("priv_validator_key.json: %w", err)
		}
	}
	if !bytes.Equal(f.PubKey.Value, pub) {
		wipePrivate(priv)
		return nil, fmt.Errorf("priv_validator_key.json: pub_key is not the private key's: %w", signer.ErrInvalidKey)
	}
	return priv, nil
}
