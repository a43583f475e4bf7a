// Package inprocess holds signing keys in process memory: the fastest
// signer path (an Ed25519 signature costs what crypto/ed25519's costs) and
// the floor every other backend is measured against.
//
// It follows the shape every signerkit backend shares (see package
// signer): Config names a key file, Open opens its key as a *Signer,
// OpenStore returns a Store, and ParseURI reads an inprocess: URI, a
// scheme the package registers with signer.Register when imported.
//
// # Signers
//
// A Signer is made by Open from a key file, by Generate, from a seed or
// scalar by FromSeed (RFC 8032 Ed25519 seeds; ECDSA private scalars), or
// around an existing private key by FromPrivateKey. It signs Ed25519,
// ECDSA on P-256, P-384 and secp256k1 (deterministic, low-S, as Cosmos SDK
// and tm2 expect) and RSA PKCS #1 v1.5 and PSS, and implements
// signer.AlgorithmSigner. A Store keeps named keys and implements signer's
// key store interfaces (generate, import, list, open, delete).
//
// # Key files
//
// ParseKeyFile and LoadKeyFile read a private key from a PEM file —
// PKCS #8 ("PRIVATE KEY", as openssl genpkey writes), SEC 1 ("EC PRIVATE
// KEY", including secp256k1, which crypto/x509 does not know) or PKCS #1
// ("RSA PRIVATE KEY") — or from a CometBFT or gno priv_validator_key.json,
// whose public key must match its private key. MarshalKeyFile and
// WriteKeyFile write one. Key files are not encrypted: the file's mode is
// all that protects them. Nothing here checks it, so keep them mode 0600,
// as WriteKeyFile writes them; for a key encrypted at rest use keybase,
// and for one that never leaves its device, a device backend.
//
// # URIs
//
// signer.Open opens a key file from a URI of the inprocess scheme:
//
//	inprocess:file=/etc/signerkit/validator.pem
//	inprocess:file=/etc/signerkit/tls.pem;algorithm=rsa-pss
//
// Its attributes, both in the path:
//
//	file       the key file's path (required); percent-encode ';', '?',
//	           '&' and '%' in it
//	algorithm  the algorithm, as signer.ParseAlgorithm names it; needed
//	           only to sign PSS with an RSA key (default rsa-pkcs1v15)
//
// The scheme takes no secret: pin-source and pin-value are refused as
// unknown attributes, and a Secret passed to signer.OpenSecret is unused.
//
// # Key material
//
// A Signer holds a copy of its private key of its own, whatever it was
// made from, and Close wipes it: Ed25519 and secp256k1 keys completely;
// for P-256, P-384 and RSA keys only the math/big private values, as
// crypto/rsa and crypto/ecdsa keep copies of their own that no caller can
// reach, which Close only drops for the garbage collector. Open wipes the
// key it read from the file once the Signer has its copy. The process's
// memory is the boundary: anyone who can read it can read the keys. For
// keys that must not be exportable, use a device backend.
//
// Ed25519 keys are expanded and signed with signerkit's own
// implementation (RFC 8032 on filippo.io/edwards25519), not
// crypto/ed25519: since Go 1.24 crypto/ed25519 keeps an expanded copy of
// every key passed to Sign, seed included, in a process-wide cache that
// no caller can wipe, and ed25519.NewKeyFromSeed, GenerateKey and
// x509.ParsePKCS8PrivateKey leave copies too. The expanded key lives in
// memory outside the Go heap, locked in RAM (mlock) and left out of core
// dumps (MADV_DONTDUMP) where the system allows, and each sign wipes its
// scratch state (hash states, nonce) and the stack below it. Signing
// costs what ed25519.Sign costs (docs/measurements.md). After Close, a scan of the
// whole process's memory finds no copy of the seed (TestEd25519NoResidue).
// Key files are read and written without crypto/x509 for Ed25519 for the
// same reason; the bytes of the file itself are the caller's to wipe.
//
// Ed25519 public keys entering the package — the public half of a key
// given to FromPrivateKey, the pub_key of a priv_validator_key.json, the
// key derived from a PKCS #8 file or a seed — must be canonical encodings
// of points not of small order (signer.CheckEd25519PublicKey); others are
// refused with signer.ErrInvalidKey. Public returns a copy.
//
// # Errors
//
// Errors start with "inprocess: " and wrap one of signer's sentinels:
// signer.ErrCorrupt for a key file that cannot be read as a key,
// ErrInvalidKey for inconsistent key material, ErrUnsupported for key
// types this package does not sign with, ErrKeyNotFound for a missing key
// or file. They never hold key bytes.
//
// # Concurrency
//
// Signer and Store are safe for concurrent use. Signs run in parallel
// under a read lock; Close waits for signs in flight, then wipes, and
// signs after it fail with signer.ErrClosed.
//
// # Deadlines
//
// There is no device or connection to wait on: a sign is a bounded
// computation (tens of microseconds for Ed25519 and ECDSA, milliseconds
// for RSA), so crypto.Signer's Sign, which takes no context, cannot hang,
// and SignContext checks its context once, before it starts.
package inprocess
