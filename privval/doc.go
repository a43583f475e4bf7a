// Package privval puts a signerkit signer behind a gno or CometBFT
// validator: it is the signer side of the remote-signer protocols those
// nodes speak, and it signs every request through a guard.Guard, so that
// the key never double signs whichever node, sentry or restarted process
// asks.
//
// # Protocols
//
// Endpoint speaks the CometBFT privval protocol: the node listens
// (priv_validator_laddr in CometBFT, [consensus.priv_validator.tmkms_listener]
// in gno v1.7.1) and the Endpoint dials it, then answers PubKeyRequest,
// SignVoteRequest, SignProposalRequest and PingRequest, each a
// varint-delimited protobuf privval Message of at most 10 KiB. It dials
// again, with exponential backoff and jitter, whenever the connection
// ends. Config.Dialect picks the version:
//
//   - V038: CometBFT v0.38, with vote extensions. The Endpoint signs the
//     extension of every precommit for a block, even an empty one, and
//     refuses an extension on anything else, as CometBFT's FilePV does.
//   - V034: Tendermint and CometBFT v0.34.
//   - GnoTMKMS: the v0.34 protocol as gno v1.7.1's tmkms_listener speaks it,
//     with the sign bytes gno's tm2 builds (see package signbytes).
//
// Server speaks gno's native remote-signer protocol
// (tm2/pkg/bft/privval/signer/remote, the one gnokms served): the node
// ([consensus.priv_validator.remote_signer]) dials the Server and sends
// amino PubKeyRequest and SignRequest messages, each a uvarint-length
// google.protobuf.Any of at most 1 MiB, carrying opaque sign bytes.
//
// # Secure channels
//
// Over TCP both protocols run inside Tendermint's SecretConnection
// (X25519, ChaCha20-Poly1305, each side proving an Ed25519 identity key).
// This package takes the channel as a hook: Config.Handshake and
// ServerConfig.Handshake receive each new connection and return the
// secured one and the peer's identity key (or an error, which ends the
// connection; an Endpoint then dials again, a Server serves on). Unix
// sockets are used as they are, as the nodes use them.
//
// SecretConnection(identity, allow) is the Merlin-bound handshake that
// CometBFT v0.34 and v0.38 (privval.TCPListener) and gno's tmkms_listener
// run: set it as Config.Handshake on a TCP Endpoint. identity is the
// signer's identity key, which a gno node must list in
// [consensus.priv_validator.tmkms_listener] allowed_kms_pubkeys.
// LegacySecretConnection(identity, allow) is tm2's pre-Merlin handshake,
// which gno's native remote-signer client runs on every TCP connection:
// set it as ServerConfig.Handshake on a TCP Server, and list identity in
// the node's remote_signer tcp_authorized_keys. In both, allow is the
// node identity keys accepted (gno's node_id key, or the key a CometBFT
// node's TCPListener is given); a node with another key gets an
// *UnauthorizedPeerError, which wraps signer.ErrPermissionDenied, and the
// connection is closed before any request is read. A nil allow accepts
// any node, which a stock CometBFT node needs since it makes a new
// identity at every start; the HandshakeTimeout bounds a peer that stalls
// mid-handshake.
//
// # Signing
//
// A vote or proposal becomes canonical sign bytes (package signbytes) and
// goes to the guard (see below). A sign the guard allows is sent back in
// the node's message with its signature and, when the guard answered a
// timestamp-only change with the earlier signature, the earlier timestamp,
// as FilePV does. A sign the guard refuses (a double sign), a request for
// another chain (Config.ChainID) or a request that cannot be signed goes
// back as a RemoteSignerError whose Code is an ErrorCode, and the
// connection stays up. The native protocol cannot carry a timestamp back,
// so there a timestamp-only change is refused; a gno node keeps its own
// state and answers that case itself.
//
// A frame that breaks the protocol (garbled, truncated, of an unknown or
// unexpected type, above the size cap), or that the secure channel refuses
// (a SecretConnection frame that fails authentication: tampered, replayed,
// out of order), ends its connection with a *ProtocolError, counted in
// Stats.ProtocolErrors and reported to OnDisconnect; an Endpoint then
// dials again.
// A frame's buffer grows with the data that arrives (from 4 KiB, doubling),
// not with the length its prefix announces: a peer that announces 1 MiB and
// sends nothing holds 4 KiB of the server's memory, not 1 MiB.
// OnConnect reports each connection that completed its handshake. Every
// goroutine an Endpoint or Server starts has returned when Run or Serve
// returns.
//
// # One request, end to end
//
// A sign request makes four hops, each a type of its own, and is parsed
// once:
//
//  1. Endpoint.serve (or Server's) reads one frame and decodes it. The
//     Endpoint hands the vote's or proposal's fields to
//     Guard.SignConsensus, which encodes them once into a guard.Request;
//     the Server parses the native protocol's sign bytes into one
//     (Guard.ParseRequest), to check the chain, and signs it with
//     Guard.SignRequest. The Request carries the chain, the phase and the
//     height/round/step, typed, with the sign bytes.
//  2. The Guard applies the double-sign rules to it under the chain's
//     lock.
//  3. The key signs: through guard.RequestSigner's SignGuarded when the
//     key has it (the daemon's backends, which file their metrics by the
//     Request's chain and phase), else through SignContext.
//  4. The Guard writes and syncs its state, and only then does the
//     signature come back to serve, which writes the response.
//
// No hop reads a request's chain or phase from the context, and no hop
// parses the sign bytes again. The context carries only the request's
// deadline, its label for a signertrace.Instrumented key, and any
// signertrace.Trace the caller attached.
//
// # Stopping
//
// Cancelling the context given to Run or Serve stops at once: a sign in
// flight is abandoned (the guard releases nothing it did not record).
// Shutdown stops gracefully, as http.Server.Shutdown does: no new request
// is read and no new connection made, a request being served is answered,
// then the connections close and Run or Serve returns ErrShutdown.
//
// # Statistics and tracing
//
// Every request is labelled with its phase ("proposal", "prevote",
// "precommit"; "pubkey" and "ping" for the others) and timed from the
// moment it is read to the moment its response is written. The per-phase
// count, errors (refusals), min, p50, p90, p99 and max come from
// a signerstats.Recorder, in Stats().Phases; OnRequest receives each request's
// label, height, round, duration, guard outcome and refusal. The context
// given to Run or Serve reaches the guard and the backend, so a
// signertrace.Trace attached to it sees their stages.
//
// # Concurrency
//
// An Endpoint serves one connection at a time; run one per validator or
// sentry, all over one Guard, which serves one sign per chain at a time
// and gives every sentry asking for the same height, round and step the
// same signature. A Server serves any number of connections at once.
package privval
