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
// assertion, such as AlgorithmSigner, HealthChecker (a round trip to the
// device that signs nothing: what a readiness probe asks), and the key
// store abilities
// KeyGenerator, KeyImporter, KeyLister, KeyOpener and KeyDeleter that a
// backend's store type (a keybase directory, a token, an HSM) offers.
//
// # One shape for every backend
//
// Every backend package (inprocess, keybase, ledger, yubihsm, pkcs11)
// follows one convention, so that code written for one reads the same for
// all:
//
//   - Config says where the keys are (a file, a directory, a device, a
//     connector, a module and token), how to unlock them (Secret, a
//     signer.Secret, wherever the backend needs a passphrase, password or
//     PIN), and which key Open opens (Key, a KeyRef, wherever the store
//     can hold more than one: a Ledger's validator app has one key, so
//     ledger.Config has no Key, and needs no Secret, so it has no Secret
//     either). Its zero values are documented defaults.
//   - Open(ctx, cfg) opens one key and returns the backend's concrete
//     signer, always named Signer (*keybase.Signer, *pkcs11.Signer, …). Its
//     Close releases everything Open acquired.
//   - OpenStore(ctx, cfg) returns the backend's Store, which manages the
//     keys it holds with the same method names everywhere: OpenKey,
//     ListKeys and, where the device allows (all but a Ledger),
//     GenerateKey, ImportKey and DeleteKey (the KeyOpener, KeyLister, KeyGenerator, KeyImporter and
//     KeyDeleter interfaces below), and Close. A Store's OpenKey returns
//     its backend's *Signer as a Signer.
//   - ParseURI(uri) returns the Config that a URI of the backend's scheme
//     describes, and the package registers the scheme (Register) so that
//     Open in this package opens any key from one string.
//   - Arguments run context first, then key material, then algorithm, then
//     label: ImportKey(ctx, priv, alg, label), GenerateKey(ctx, alg, label),
//     inprocess.FromSeed(seed, alg).
//   - Errors start with the package's name once ("keybase: …") and wrap
//     one of this package's sentinels.
//   - Backends that need cgo (ledger's HID transport, pkcs11) say so on
//     the first lines of their package doc, and built without cgo they
//     compile and return errors wrapping ErrUnsupported.
//
// # Opening keys by URI
//
// Open (and OpenSecret, which takes a Secret to fall back on) opens a key
// from a URI of a registered scheme. Every scheme has the form RFC 7512
// gives PKCS#11 URIs (see URI): path attributes say where and which key,
// query attributes how; secrets are named, not written, through pin-source
// (env:NAME or a file).
//
// # Algorithms and signatures
//
// Algorithm names what SignContext produces: Ed25519 over the message;
// ECDSA on P-256 and secp256k1 over SHA-256 and on P-384 over SHA-384, as
// fixed-width r‖s (low-S on secp256k1, as Cosmos SDK and tm2 require); RSA
// PKCS #1 v1.5 and PSS over SHA-256; BLS12381MinPK and BLS12381MinSig,
// BLS12-381 over the message with compressed signatures (their keys come
// from package bls and verify through the BLSPublicKey interface, so this
// package links no pairing library). Algorithms lists the standard-library
// six; AllAlgorithms adds BLS. Algorithm.Verify checks a signature of
// that form, and refuses, as Algorithm.CheckKey does, an Ed25519 key of
// small order or not canonically encoded (CheckEd25519PublicKey), under
// which one constant signature would verify; ECDSAToRaw and ECDSAToASN1 convert between r‖s and the ASN.1
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
// Package signertrace, beside this one as net/http/httptrace is beside
// net/http, carries a trace of each sign's stages in its context, and
// keeps latency statistics per label.
//
// # Concurrency
//
// Every Signer in signerkit is safe for concurrent use: signs may run from
// any number of goroutines, and Close may be called while signs are in
// flight (they finish, or fail with ErrClosed). A backend whose device
// serialises operations queues signs rather than failing them; its package
// doc says how.
package signer
