// Package signbytes parses and builds the sign bytes of consensus votes
// and proposals: the exact bytes a gno or CometBFT validator hands its
// signer. A signer that knows what it is signing can refuse a double sign
// (package guard), label its latency by consensus step, and rebuild a
// message with an earlier timestamp.
//
// # Dialects
//
// Sign bytes are a uvarint length followed by a canonical message in the
// protobuf wire format: CanonicalVote (prevote, precommit),
// CanonicalProposal and, in CometBFT v0.38, CanonicalVoteExtension. Two
// encoders produce them:
//
//   - TM2: gno's tm2 (gno v1.7.1, tm2/pkg/bft/types), through amino. Its
//     canonical types are laid out field for field like Tendermint v0.34's
//     canonical.proto.
//   - CometBFT: CometBFT v0.34 and v0.38 (and Tendermint v0.34), through
//     gogoproto. Votes and proposals are encoded alike in both versions;
//     v0.38 adds vote extensions.
//
// For real votes and proposals the two produce the same bytes, so Parse
// usually reports both (Format TM2|CometBFT). They differ only where a
// nested message is empty: CometBFT always writes the timestamp and a block
// id's part-set header, even empty, where amino leaves them out. So a
// timestamp of exactly the Unix epoch, or a block id with a hash and an
// empty part-set header, encodes differently, and Message.Bytes needs to
// be told which dialect to use.
//
// # Strictness
//
// Parse accepts only canonical bytes: what one of the encoders would
// produce for the message it decodes, checked by encoding the message
// again and comparing. Fields out of order or repeated, zero values written
// out, unknown fields, overlong varints, a length prefix that does not
// match, and timestamps outside years 1 to 9999 are all refused with an
// *Error, which wraps signer.ErrInvalidMessage. So two distinct byte
// strings never parse to the same message in one dialect, and
// Message.Bytes rebuilds the input exactly.
//
// # Concurrency
//
// The functions are pure and safe for concurrent use. A Message is a
// value; Parse copies what it keeps out of its input.
package signbytes
