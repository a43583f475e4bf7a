package daemon

import (
	"crypto/ed25519"
	"encoding/hex"

	"github.com/signerkit/signerkit/keyfmt"
)

// NodePin is where a node of one protocol pins the signer's identity key,
// and the key written as that setting takes it.
type NodePin struct {
	// Setting is the node's config setting (its config.toml table and
	// key), empty when the node has none.
	Setting string
	// Value is the identity key as Setting takes it.
	Value string
	// Note says what the node does instead when Setting is empty.
	Note string
}

// IdentityPin returns where a node speaking protocol pins the signer
// identity pub (gno v1.7.1's and CometBFT's configs):
//
//   - tm2-remote: gno's remote_signer client takes the signer's key in
//     tcp_authorized_keys, as gno prints keys (gpub1…). An empty list
//     accepts any signer.
//   - tm2-tmkms: gno's tmkms_listener takes it in allowed_kms_pubkeys,
//     as ed25519:<hex>; required over TCP.
//   - cometbft-v0.38, cometbft-v0.34: the privval listener has no such
//     setting: it accepts any signer that completes the handshake.
func IdentityPin(protocol string, pub ed25519.PublicKey) NodePin {
	switch protocol {
	case ProtocolTM2Remote:
		return NodePin{Setting: "[consensus.priv_validator.remote_signer] tcp_authorized_keys", Value: keyfmt.GnoPubKey(pub)}
	case ProtocolTM2TMKMS:
		return NodePin{Setting: "[consensus.priv_validator.tmkms_listener] allowed_kms_pubkeys", Value: "ed25519:" + hex.EncodeToString(pub)}
	}
	return NodePin{Note: "CometBFT's privval listener (priv_validator_laddr) pins no signer key: it serves any signer that " +
		"completes the handshake, so keep that address on a Unix socket or a private network"}
}
