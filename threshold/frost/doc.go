// Package frost implements FROST(Ed25519, SHA-512), the two-round Schnorr
// threshold signature scheme of RFC 9591, on filippo.io/edwards25519. Any t
// of n participants together produce an ordinary Ed25519 signature (RFC
// 8032) under the group's public key; fewer learn nothing about the key.
// crypto/ed25519.Verify accepts the signatures as they are.
//
// The package is the protocol alone, with no I/O other than the nonce
// file; package threshold runs it between servers over mutual TLS.
//
// # Keys
//
//   - SplitSeed and Split are the trusted-dealer key generation of RFC 9591
//     appendix C. SplitSeed splits an existing Ed25519 key, given its
//     32-byte seed, through the clamped scalar RFC 8032 derives from it, so
//     a validator's key can be imported. Each participant checks its share
//     against the VSS commitment with NewKeyPackage (vss_verify).
//   - NewDKG, DKG.Round2 and DKG.Finish are a distributed key generation
//     with proofs of knowledge (the DKG of the FROST paper, which RFC 9591
//     refers to), for fresh keys no one ever held whole. A participant that
//     sends a bad proof or a bad share is named in a *DKGError. RunDKG runs
//     all participants in one process.
//
// # Signing
//
// Round one, Commit, draws a pair of nonces and publishes their
// commitments; it can run in batches ahead of any message. Round two,
// Sign, turns the nonces, the message and the commitments of all signers
// into a signature share and wipes the nonces. Aggregate sums the shares,
// verifies the signature and, if it fails, names the participant whose
// share is bad with a *ShareError (verify_signature_share); a bad share is
// never returned as part of a signature. With commitments made ahead, a
// coordinator signs in one round trip to each participant.
//
// A nonce pair must never sign twice: two shares with one nonce reveal the
// participant's secret share. NonceStore keeps nonce pairs in a file and
// marks each consumed, durably (written and fdatasync'd), before the share
// it makes exists, so not even a crash between the two can reuse one.
//
// # Wire encodings
//
// Identifiers are the scalars 1 … 65535, sent as two bytes; scalars and
// elements as in the ciphersuite (32 bytes each). Decoders (the Parse
// functions) refuse scalars out of range and elements that are not
// canonical, are the identity or lie outside the prime-order subgroup,
// with an *EncodingError wrapping signer.ErrProtocol. The subgroup test is
// exact: it halves the point (Pornin's method, which RFC 9591 cites as an
// optimization of multiplying by L), at about half the cost of the
// multiplication, which the tests compare it with on every coset.
//
// A coordinator can compute an aggregation's binding factors, group
// commitment and challenge while the shares travel (PrepareAggregate);
// Aggregate is that and Aggregation.Aggregate in one call.
//
// # Concurrency
//
// KeyPackage, PublicKeyPackage and VSSCommitment are not changed after
// they are made (except by Wipe) and may be read from several goroutines.
// NonceStore is safe for concurrent use. SigningNonces and DKG belong to
// one goroutine at a time.
package frost
