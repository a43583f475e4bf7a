package privval

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ed25519"
	"encoding/hex"
	"fmt"
	"net"
	"slices"

	"github.com/signerkit/signerkit/internal/secretconn"
	"github.com/signerkit/signerkit/signer"
)

// SecretConnection returns a Handshake that runs Tendermint's
// SecretConnection in its Merlin-bound form, the one CometBFT v0.34 and
// later and gno's tmkms_listener speak on TCP: X25519 ephemeral keys,
// a Merlin transcript, HKDF-SHA256 keys, ChaCha20-Poly1305 frames, and
// each side proving its Ed25519 identity key. identity is this signer's
// identity key (the key a gno node lists in allowed_kms_pubkeys; it may
// live on any signer.Signer with an Ed25519 public key). allow lists the
// validator identity keys accepted; a peer with another key gets an
// *UnauthorizedPeerError and the connection is closed. A nil allow accepts
// any peer, which is what a stock CometBFT node needs: it makes a new
// identity at every start; an empty, non-nil allow accepts none. The keys
// are copied.
func SecretConnection(identity crypto.Signer, allow []ed25519.PublicKey) Handshake {
	return secretHandshake(identity, allow, secretconn.Merlin)
}

// LegacySecretConnection returns a Handshake that runs tm2's pre-Merlin
// SecretConnection, which gno's native remote-signer client runs on every
// TCP connection (ServerConfig.Handshake). allow is the node keys accepted
// (the node's node_id key); nil accepts any, as gno's own server does
// with an empty authorized-keys list, and an empty, non-nil allow none.
func LegacySecretConnection(identity crypto.Signer, allow []ed25519.PublicKey) Handshake {
	return secretHandshake(identity, allow, secretconn.PreMerlin)
}

func secretHandshake(identity crypto.Signer, allow []ed25519.PublicKey, v secretconn.Variant) Handshake {
	if allow != nil {
		keys := make([]ed25519.PublicKey, len(allow))
		for i, k := range allow {
			keys[i] = bytes.Clone(k)
		}
		allow = keys
	}
	return func(ctx context.Context, conn net.Conn) (net.Conn, ed25519.PublicKey, error) {
		sc, err := secretconn.Handshake(ctx, conn, identity, v)
		if err != nil {
			return nil, nil, err
		}
		peer := sc.RemotePubKey()
		if allow != nil && !slices.ContainsFunc(allow, func(k ed25519.PublicKey) bool { return bytes.Equal(k, peer) }) {
			_ = sc.Close()
			return nil, peer, &UnauthorizedPeerError{Key: peer}
		}
		return sc, peer, nil
	}
}

// UnauthorizedPeerError is a peer that proved an identity key not on the
// allowlist. It wraps signer.ErrPermissionDenied.
type UnauthorizedPeerError struct {
	Key ed25519.PublicKey
}

func (e *UnauthorizedPeerError) Error() string {
	return fmt.Sprintf("peer identity ed25519:%s is not on the allowlist", hex.EncodeToString(e.Key))
}

// Unwrap returns signer.ErrPermissionDenied.
func (e *UnauthorizedPeerError) Unwrap() error { return signer.ErrPermissionDenied }
