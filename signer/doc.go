// Package signer defines the one interface every signerkit backend
// implements, the algorithms it signs with, the errors it returns, and the
// latency tracing through which it says where each millisecond of a sign
// went.
//
// # The interface
//
// A Signer is a crypto.Signer — so it plugs into crypto/x509, crypto/tls and
// golang.org/x/crypto/ssh as it is — that also signs whole messages under a
// context (SignContext) and releases its key or device (Close). Public never
// does I/O. Further abilities (key generation, attestation, health) are
// small separate interfaces that backends implement and callers find by type
// assertion, such as AlgorithmSigner, and the key store abilities
// KeyGenerator, KeyImporter, KeyLister, KeyOpener and KeyDeleter that a
// backend's store type (a keybase directory, a token, an HSM) offers.
//
// # Algorithms and signatures
//
// Algorithm names what SignContext produces: Ed25519 over the message;
// ECDSA on P-256 and secp256k1 over SHA-256 and on P-384 over SHA-384, as
// fixed-width r‖s (low-S on secp256k1, as Cosmos SDK and tm2 require); RSA
// PKCS #1 v1.5 and PSS over SHA-256. Algorithm.Verify checks a signature of
// that form; ECDSAToRaw and ECDSAToASN1 convert between r‖s and the ASN.1
// that crypto.Signer returns.
//
// # Errors
//
// Backends return errors that wrap one of this package's sentinels
// (ErrClosed, ErrWrongPassphrase, ErrRejected, ErrDoubleSign, …), usually
// through a typed error of their own that carries the device's code, and
// wrap ctx.Err() when a context ends a call. Errors never contain
// passphrases, PINs or key bytes.
//
// # Latency tracing
//
// A Trace carried by a context (WithTrace) receives each stage of a sign —
// kdf, session, transport, stall, wire, device, sign — with its duration and
// whether a clock measured it or a simulator's latency profile modeled it,
// plus counters such as APDUs and bytes on the wire. A Collector sums them;
// Instrument wraps a Signer and keeps latency statistics per caller-chosen
// label (proposal, prevote, precommit). With no Trace attached, reporting a
// stage costs a backend a context lookup and a nil check, about 5 ns.
//
// # Concurrency
//
// Every Signer in signerkit is safe for concurrent use: signs may run from
// any number of goroutines, and Close may be called while signs are in
// flight (they finish, or fail with ErrClosed). A backend whose device
// serialises operations queues signs rather than failing them; its package
// doc says how. Trace hooks must be safe for concurrent use when one Trace
// is attached to concurrent calls. Collector and Instrumented are safe for
// concurrent use.
package signer
