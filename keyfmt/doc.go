// Package keyfmt writes and reads Ed25519 public keys in the formats gno
// and CometBFT print and take, so that an operator never converts a key
// by hand:
//
//   - gno's bech32 public key, "gpub1…" (GnoPubKey, ParseGnoPubKey): what
//     `gnoland secrets get node_id` prints and a gno node's remote signer
//     takes in tcp_authorized_keys. It is the bech32, under prefix "gpub",
//     of the key's amino binary Any (GnoAmino): type URL
//     "/tm.PubKeyEd25519", then the 32 bytes.
//   - gno's address "g1…" and CometBFT's upper-case hex address, both the
//     first 20 bytes of the key's SHA-256 (GnoAddress, CometBFTAddress).
//   - "ed25519:<hex>" (as signerkit logs keys, and as gno's tmkms_listener
//     takes allowed_kms_pubkeys), bare hex, and standard base64 (as both
//     chains' JSON shows keys): ParsePublicKey takes all of these and
//     "gpub1…".
//   - node_key.json files, CometBFT's and gno's (ParseNodeKey,
//     LoadNodeKey), from which only the public key is returned.
//   - a genesis file's validator entry for each chain
//     (CometBFTGenesisValidator, GnoGenesisValidator).
//
// Every encoding is checked against gno's and CometBFT's own code in the
// interop module's tests.
//
// # Contracts
//
// Parsers never panic and never return a key of the wrong size: any input
// they cannot read is an *Error wrapping ErrFormat that says what was
// wrong (and ErrNotEd25519 when the input is a well-formed key of another
// algorithm). Errors quote what was read, shortened, but never the
// contents of a private key file.
package keyfmt
