package keyfmt

import (
	"bytes"
	"crypto/ed25519"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"fmt"

	"github.com/signerkit/signerkit/internal/fileopen"
)

// Amino names of an Ed25519 private key, as a node_key.json may carry
// them.
const (
	GnoPrivKeyType      = "/tm.PrivKeyEd25519"
	CometBFTPrivKeyType = "tendermint/PrivKeyEd25519"
)

// NodeKeyFormat says whose node_key.json a file is.
type NodeKeyFormat int

// The node_key.json formats ParseNodeKey reads.
const (
	// CometBFTNodeKey is CometBFT's (p2p.NodeKey):
	// {"priv_key":{"type":"tendermint/PrivKeyEd25519","value":"<base64>"}}.
	CometBFTNodeKey NodeKeyFormat = iota + 1
	// GnoNodeKey is gno's (tm2 p2p/types.NodeKey, whose field is the
	// concrete key type, so amino writes no type): {"priv_key":"<base64>"}.
	GnoNodeKey
	// GnoTypedNodeKey is the same key with an amino type, as tm2 writes
	// an interface-typed key:
	// {"priv_key":{"@type":"/tm.PrivKeyEd25519","value":"<base64>"}}.
	GnoTypedNodeKey
)

func (f NodeKeyFormat) String() string {
	switch f {
	case CometBFTNodeKey:
		return "CometBFT node_key.json"
	case GnoNodeKey, GnoTypedNodeKey:
		return "gno node_key.json"
	}
	return fmt.Sprintf("NodeKeyFormat(%d)", int(f))
}

// MaxNodeKeySize bounds the node_key.json files read: a real one is
// under 200 bytes.
const MaxNodeKeySize = 64 << 10

// ParseNodeKey reads a CometBFT or gno node_key.json and returns the
// node's public key (its p2p identity, which a gno node also proves in
// its remote-signer SecretConnections) and the file's format. The private
// key is checked (its public half must be the key its seed derives) and
// cleared; it is never returned. A file in no known shape is an *Error
// wrapping ErrFormat.
func ParseNodeKey(data []byte) (ed25519.PublicKey, NodeKeyFormat, error) {
	var file struct {
		PrivKey json.RawMessage `json:"priv_key"`
	}
	if err := json.Unmarshal(data, &file); err != nil {
		return nil, 0, newError("node_key.json", "not JSON: "+err.Error(), err)
	}
	if len(file.PrivKey) == 0 {
		return nil, 0, newError("node_key.json", `no "priv_key"`, nil)
	}
	var value string
	var format NodeKeyFormat
	if file.PrivKey[0] == '"' {
		if err := json.Unmarshal(file.PrivKey, &value); err != nil {
			return nil, 0, newError("node_key.json", "priv_key: "+err.Error(), err)
		}
		format = GnoNodeKey
	} else {
		var typed struct {
			Type     *string `json:"type"`
			AminoTyp *string `json:"@type"`
			Value    string  `json:"value"`
		}
		if err := json.Unmarshal(file.PrivKey, &typed); err != nil {
			return nil, 0, newError("node_key.json", "priv_key: want a base64 string or {type, value}: "+err.Error(), err)
		}
		switch {
		case typed.Type != nil && *typed.Type == CometBFTPrivKeyType:
			format = CometBFTNodeKey
		case typed.AminoTyp != nil && *typed.AminoTyp == GnoPrivKeyType:
			format = GnoTypedNodeKey
		case typed.Type != nil:
			return nil, 0, newError("node_key.json", fmt.Sprintf("priv_key type %q, want %q", printable(*typed.Type), CometBFTPrivKeyType), ErrNotEd25519)
		case typed.AminoTyp != nil:
			return nil, 0, newError("node_key.json", fmt.Sprintf("priv_key @type %q, want %q", printable(*typed.AminoTyp), GnoPrivKeyType), ErrNotEd25519)
		default:
			return nil, 0, newError("node_key.json", `priv_key has no "type" (CometBFT) or "@type" (gno)`, nil)
		}
		value = typed.Value
	}
	pub, err := edPublicFromPrivate(value)
	if err != nil {
		return nil, 0, newError("node_key.json", "priv_key: "+err.Error(), nil)
	}
	return pub, format, nil
}

// edPublicFromPrivate returns the public key of a base64 Ed25519 private
// key (seed and public key, 64 bytes), checking that its halves agree.
func edPublicFromPrivate(value string) (ed25519.PublicKey, error) {
	raw, err := base64.StdEncoding.DecodeString(value)
	defer clear(raw)
	if err != nil {
		return nil, fmt.Errorf("not base64")
	}
	if len(raw) != ed25519.PrivateKeySize {
		return nil, fmt.Errorf("%d bytes, want %d (an Ed25519 seed and public key)", len(raw), ed25519.PrivateKeySize)
	}
	priv := ed25519.NewKeyFromSeed(raw[:ed25519.SeedSize])
	defer clear(priv)
	pub := bytes.Clone(priv[ed25519.SeedSize:])
	if subtle.ConstantTimeCompare(pub, raw[ed25519.SeedSize:]) != 1 {
		return nil, fmt.Errorf("its public half is not the key of its seed: a damaged file")
	}
	return pub, nil
}

// LoadNodeKey reads the node_key.json file at path (ParseNodeKey). Its
// errors name the path.
func LoadNodeKey(path string) (ed25519.PublicKey, NodeKeyFormat, error) {
	data, err := fileopen.ReadFile(path, MaxNodeKeySize) // refuses a FIFO
	defer clear(data)
	if err != nil {
		return nil, 0, fmt.Errorf("keyfmt: %w", err)
	}
	if len(data) > MaxNodeKeySize {
		return nil, 0, newError(path, fmt.Sprintf("over %d bytes: not a node_key.json", MaxNodeKeySize), nil)
	}
	pub, format, err := ParseNodeKey(data)
	if e, ok := err.(*Error); ok {
		e.Input = path
	}
	return pub, format, err
}
