package bls

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/signerkit/signerkit/internal/keyfile"
	"github.com/signerkit/signerkit/signer"
)

// The key types of a CometBFT v0.40 priv_validator_key.json holding a
// BLS12-381 key.
const (
	cometPrivKeyType = "cometbft/PrivKeyBls12_381"
	cometPubKeyType  = "cometbft/PubKeyBls12_381"
)

// maxKeyFile bounds what LoadKeyFile reads: a validator key file is a few
// hundred bytes.
const maxKeyFile = 64 << 10

// validatorKey is a priv_validator_key.json as CometBFT v0.40 writes one
// for a bls12_381 key.
type validatorKey struct {
	Address string     `json:"address"`
	PubKey  typedValue `json:"pub_key"`
	PrivKey typedValue `json:"priv_key"`
}

type typedValue struct {
	Type  string `json:"type"`
	Value []byte `json:"value"`
}

func corrupt(format string, args ...any) error {
	return fmt.Errorf("bls: key file: "+format+": %w", append(args, signer.ErrCorrupt)...)
}

// ParseKeyFile reads a CometBFT priv_validator_key.json that holds a
// bls12_381 key (priv_key of type cometbft/PrivKeyBls12_381, the 32-byte
// scalar; pub_key of type cometbft/PubKeyBls12_381, its 96-byte serialized
// min-pk public key) and returns a Signer for alg (BLS12381MinPK, or 0 for
// it; BLS12381MinSig signs min-sig with the same scalar). The public key
// and, when present, the address must match the private key. Errors wrap
// signer.ErrCorrupt for a file that is not such a key, ErrInvalidKey for
// key material that is out of range or inconsistent, and never hold key
// bytes. data is the caller's to wipe.
func ParseKeyFile(data []byte, alg signer.Algorithm) (*Signer, error) {
	if alg == 0 {
		alg = signer.BLS12381MinPK
	}
	if err := checkAlgorithm(alg); err != nil {
		return nil, err
	}
	if len(data) > maxKeyFile {
		return nil, corrupt("more than %d bytes, larger than any key file", maxKeyFile)
	}
	var f validatorKey
	err := json.Unmarshal(data, &f)
	defer clear(f.PrivKey.Value)
	if err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return nil, corrupt("bad JSON at byte %d", se.Offset)
		}
		return nil, corrupt("not a priv_validator_key.json (want address, pub_key and priv_key)")
	}
	if f.PrivKey.Type != cometPrivKeyType {
		return nil, fmt.Errorf("bls: key file: priv_key of type %.64q, want %s: %w", f.PrivKey.Type, cometPrivKeyType, signer.ErrUnsupported)
	}
	if f.PubKey.Type != cometPubKeyType {
		return nil, corrupt("pub_key of type %.64q, want %s", f.PubKey.Type, cometPubKeyType)
	}
	s, err := FromSecretKey(f.PrivKey.Value, alg)
	if err != nil {
		return nil, err
	}
	minpk := s.pub
	if alg != signer.BLS12381MinPK {
		minpk = newPublicKey(signer.BLS12381MinPK, s.sk.public(signer.BLS12381MinPK))
	}
	if !bytes.Equal(f.PubKey.Value, minpk.serialized) {
		s.Close()
		return nil, fmt.Errorf("bls: key file: pub_key does not match priv_key: %w", signer.ErrInvalidKey)
	}
	if f.Address != "" && f.Address != cometAddress(minpk) {
		s.Close()
		return nil, fmt.Errorf("bls: key file: address does not match the key: %w", signer.ErrInvalidKey)
	}
	return s, nil
}

// cometAddress is CometBFT's address of a min-pk key: the first 20 bytes
// of the SHA-256 of its serialized form, in upper-case hex.
func cometAddress(pub *PublicKey) string {
	h := sha256.Sum256(pub.serialized)
	return fmt.Sprintf("%X", h[:20])
}

// Address returns CometBFT's address of a min-pk key: the first 20 bytes
// of the SHA-256 of its 96-byte serialized form. For a min-sig key it
// returns nil: CometBFT has none.
func (k *PublicKey) Address() []byte {
	if k == nil || k.alg != signer.BLS12381MinPK {
		return nil
	}
	h := sha256.Sum256(k.serialized)
	return h[:20]
}

// MarshalKeyFile returns s's key as a CometBFT v0.40
// priv_validator_key.json, which ParseKeyFile and CometBFT's FilePV read:
// the bytes CometBFT writes for the key (json.MarshalIndent, two spaces).
// The file holds the private key in the clear; the caller wipes the
// returned bytes. No other copy of the key is left: the file is written
// into one buffer of its exact size, the base64 of the key encoded in
// place (encoding/json would leave copies in buffers no one wipes).
func MarshalKeyFile(s *Signer) ([]byte, error) {
	sk, err := s.SecretKey()
	if err != nil {
		return nil, err
	}
	defer clear(sk)
	minpk := s.pub
	if s.alg != signer.BLS12381MinPK {
		minpk = newPublicKey(signer.BLS12381MinPK, s.sk.public(signer.BLS12381MinPK))
	}
	// Every string is ASCII that JSON writes as it is: upper-case hex,
	// the fixed types, standard base64 (which encoding/json would not
	// escape either).
	const (
		head    = "{\n  \"address\": \""
		pubHead = "\",\n  \"pub_key\": {\n    \"type\": \"" + cometPubKeyType + "\",\n    \"value\": \""
		sktHead = "\"\n  },\n  \"priv_key\": {\n    \"type\": \"" + cometPrivKeyType + "\",\n    \"value\": \""
		tail    = "\"\n  }\n}"
	)
	b64 := base64.StdEncoding
	addr := cometAddress(minpk)
	n := len(head) + len(addr) + len(pubHead) + b64.EncodedLen(len(minpk.serialized)) + len(sktHead) + b64.EncodedLen(len(sk)) + len(tail)
	out := make([]byte, 0, n)
	out = append(out, head...)
	out = append(out, addr...)
	out = append(out, pubHead...)
	out = b64.AppendEncode(out, minpk.serialized)
	out = append(out, sktHead...)
	out = b64.AppendEncode(out, sk) // within out's capacity: no copy elsewhere
	out = append(out, tail...)
	return out, nil
}

// LoadKeyFile reads and parses the key file at path (see ParseKeyFile),
// and wipes what it read. A missing file gives an error wrapping
// signer.ErrKeyNotFound, and a path that is not a regular file (a
// directory, a pipe) one wrapping signer.ErrInvalidArgument.
func LoadKeyFile(path string, alg signer.Algorithm) (*Signer, error) {
	data, err := keyfile.Read(path, maxKeyFile)
	if err != nil {
		return nil, fmt.Errorf("bls: key file %s: %w", path, err)
	}
	defer clear(data)
	s, err := ParseKeyFile(data, alg)
	if err != nil {
		return nil, fmt.Errorf("%w (file %s)", err, path)
	}
	return s, nil
}
