// Package secretconn implements Tendermint's SecretConnection, the
// authenticated and encrypted channel that validators and remote signers
// speak over TCP, in the two variants that gno v1.7.1 and CometBFT use:
//
//   - [Merlin]: Tendermint v0.34 / CometBFT v0.38 (p2p/conn). The handshake
//     challenge comes from a Merlin transcript over the sorted ephemeral
//     keys and the Diffie-Hellman secret, and the handshake messages are
//     protobuf. CometBFT's privval listener and gno v1.7.1's
//     tmkms_listener speak it.
//   - [PreMerlin]: tm2's older variant (gno v1.7.1, tm2/pkg/p2p/conn),
//     which gno's native remote signer ("remote_signer") speaks. The
//     challenge is the third 32-byte block of the same HKDF output that
//     yields the two AEAD keys, and the authentication message is amino:
//     the Ed25519 key is a bare 32-byte field, without protobuf's PublicKey
//     wrapper.
//
// Both variants then share everything else:
//
//  1. Each side sends a fresh X25519 public key as a length-prefixed
//     message {1: bytes} (protobuf BytesValue; amino encodes [32]byte the
//     same way).
//  2. The shared secret feeds HKDF-SHA256 (no salt, info
//     "TENDERMINT_SECRET_CONNECTION_KEY_AND_CHALLENGE_GEN"). Of its output,
//     the first 32 bytes are the receive key of the side whose ephemeral key
//     sorts lower and the next 32 its send key.
//  3. Data travels in ChaCha20-Poly1305 frames of a 4-byte little-endian
//     length and 1024 data bytes (zero padded), 1044 bytes sealed, with a
//     64-bit little-endian counter in bytes 4..12 of the nonce, one counter
//     per direction.
//  4. Inside the encrypted channel each side sends its Ed25519 identity key
//     and its signature of the challenge. An identity key of small order or
//     in a non-canonical encoding (signer.CheckEd25519PublicKey) is refused
//     with [ErrBadIdentityKey] before the signature is checked: under the
//     identity point one constant signature verifies for every challenge.
//
// The handshake is symmetric: [Handshake] serves the dialer and the
// listener alike. It authenticates the peer's key but does not authorize
// it; check [Conn.RemotePubKey] against an allow-list.
package secretconn
