// Package privvaltest is the validator's side of the remote-signer
// protocols of package privval, for tests and benchmarks, as
// net/http/httptest is the client's side of an HTTP server: it lets a
// test put a privval.Endpoint or privval.Server to work without a gno or
// CometBFT node.
//
//   - Listener listens where a node's priv_validator_laddr (CometBFT) or
//     tmkms_listener (gno v1.7.1) would, accepts the Endpoint's dial and
//     returns a Client, which sends PubKeyRequest, SignVoteRequest,
//     SignProposalRequest and PingRequest in one of the privval.Dialects
//     and decodes the answers.
//   - DialNative dials a privval.Server as gno's remote_signer client
//     does and returns a NativeClient, which sends the native protocol's
//     PubKeyRequest and SignRequest.
//
// Both take an optional privval.Handshake, run on the node's side of each
// new connection (a SecretConnection, on TCP); without one they speak the
// protocol on the connection as it is, as nodes do over Unix sockets.
//
// It is a test double, not a node: it keeps no consensus state, checks no
// signature (a test verifies them, with crypto/ed25519 over the sign bytes
// of package signbytes) and serves one request at a time per connection.
// Its encoders are written apart from privval's, so a test that uses both
// checks one reading of the protocol against another; the interop module
// checks both against gno's and CometBFT's own code.
package privvaltest
