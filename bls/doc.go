// Package bls signs with BLS signatures on the BLS12-381 curve, in
// process memory, on github.com/supranational/blst (which needs cgo; a
// build without cgo falls back to pure-Go circl, see "Without cgo"
// below), in both of the IETF draft's variants:
// signer.BLS12381MinPK (public keys in G1, 96-byte signatures in G2) and
// signer.BLS12381MinSig (public keys in G2, 48-byte signatures in G1).
//
// It follows the shape every signerkit backend shares (see package
// signer): Config names a key file or a secret to derive the key from,
// Open opens it as a *Signer, and ParseURI reads a bls: URI, a scheme the
// package registers with signer.Register when imported. There is no Store:
// a BLS key is a 32-byte scalar, made by GenerateKey, FromSeed,
// FromCometBFTSecret or FromSecretKey and written out by SecretKey or
// MarshalKeyFile.
//
// # CometBFT
//
// The min-pk Signer is byte-compatible with CometBFT v0.40's
// crypto/bls12381 (built with its bls12381 tag): the same 32-byte private
// key (PrivKey.Bytes), 96-byte serialized public key (PubKey.Bytes) and
// address (PublicKey.Address), 96-byte compressed signatures over the
// message itself with the DST BLS_SIG_BLS12381G2_XMD:SHA-256_SSWU_RO_NUL_,
// and FromCometBFTSecret derives what GenPrivKeyFromSecret derives. Its
// key files are CometBFT's priv_validator_key.json (ParseKeyFile). The
// module interop/cometbft040 checks all of this against CometBFT's own
// code.
//
// # Keys, signatures and validation
//
// FromSeed runs the IETF draft's KeyGen (draft-irtf-cfrg-bls-signature-04
// and later), as blst's KeyGen and Ethereum's EIP-2333 master key do.
// ParsePublicKey takes a key in its serialized or compressed form and
// refuses, with signer.ErrInvalidKey, points off the curve, outside the
// prime-order subgroup or at infinity, and any encoding that is not the
// canonical one of its point. Signatures are checked as CometBFT checks
// them — decompressed, then required to be in the subgroup, the point at
// infinity let through to fail verification — and as canonical
// encodings; a bad one fails with signer.ErrInvalidSignature, never a
// panic. PublicKey implements signer.BLSPublicKey, so
// signer.Algorithm.Verify checks BLS signatures once this package is
// imported.
//
// # Proofs of possession and aggregation
//
// PopProve and PopVerify are the draft's proof of possession (a signature
// of the compressed public key under PopDSTMinPK or PopDSTMinSig).
// AggregateSignatures adds signatures; FastAggregateVerify checks an
// aggregate of signatures over one message, by keys that have each proved
// possession (rogue-key attacks are otherwise possible), and refuses keys
// that add up to the point at infinity; AggregateVerify checks one over
// distinct messages, which it requires, as the basic scheme does. SignDST
// and VerifyDST sign and verify under other DSTs, such as DSTMinPKPoP,
// which Ethereum's consensus layer signs with.
//
// # URIs
//
// signer.Open opens a key from a URI of the bls scheme:
//
//	bls:file=/etc/cometbft/priv_validator_key.json
//	bls:algorithm=bls12381-minsig?pin-source=env:BLS_SEED
//	bls:keygen=cometbft?pin-source=/run/secrets/bls-secret
//
// Its path attributes are file, algorithm (bls12381-minpk, the default,
// or bls12381-minsig) and keygen (ietf, the default, or cometbft); without
// file, the key derives from the secret that pin-source or pin-value
// names, or else from the Secret given to signer.OpenSecret.
//
// # Key material
//
// A Signer holds the scalar in a blst.SecretKey of its own (with cgo); the
// constructors wipe the copies they make on the way (blst's KeyGen
// result, Deserialize's buffer on failure), and Close wipes the Signer's
// with blst's Zeroize. Temporaries inside blst's C code (on the C stack
// while it signs) are out of this package's reach. The process's memory is
// the boundary, as for package inprocess.
//
// # Independent checks
//
// With cgo, the tests check every signature this package makes with
// github.com/cloudflare/circl (its sign/bls package), which shares no
// code with blst, and that circl's signatures from the same scalars are
// the same bytes, in both variants and under both DSTs; the decoders are
// fuzzed against circl's. Without cgo the package itself runs on circl's
// arithmetic (below), so those same tests are circl against circl: they
// check this package's use of circl (key generation, hashing to the
// curve, encodings, aggregation) against circl's own sign/bls, not the
// arithmetic beneath both. In both builds the signatures are checked
// against known answers that come from neither library: the IETF draft
// author's basic-scheme vectors and the sign cases of
// ethereum/bls12-381-tests. The check against CometBFT
// (interop/cometbft040) runs with cgo only, as CometBFT's BLS keys need
// blst.
//
// # Without cgo
//
// Built without cgo (CGO_ENABLED=0), the package signs and verifies
// through github.com/cloudflare/circl's pure-Go BLS12-381 arithmetic
// instead, and Backend is "circl" rather than "blst". The two are
// interoperable — same DSTs, encodings and KeyGen; the tests show
// byte-equal signatures — and the same tests pass on both builds, with
// the same refusals of bad keys and signatures. circl is several times
// slower (BenchmarkBackends compares the two; docs/measurements.md has
// figures). So a validator should be built with cgo; check Backend if it matters. The circl build
// keeps the scalar in a circl Scalar, which Close zeroes.
//
// # Errors
//
// Errors start with "bls: " and wrap one of signer's sentinels:
// ErrInvalidKey, ErrInvalidSignature, ErrCorrupt for a key file that is
// not one, ErrUnsupported, ErrClosed. They never hold key bytes.
//
// # Concurrency
//
// Signer is safe for concurrent use: signs run in parallel under a read
// lock, Close waits for signs in flight, then wipes, and signs after it
// fail with signer.ErrClosed. PublicKey values are immutable and safe to
// share. A sign is a bounded computation (about a millisecond) with
// nothing to wait on, so SignContext checks its context once, before it
// starts.
package bls
