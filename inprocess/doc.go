// Package inprocess holds signing keys in process memory: the fastest
// signer path (an Ed25519 signature costs what crypto/ed25519 costs, about
// 0.03 ms) and the floor every other backend is measured against.
//
// A Key is made by Generate, from a seed or scalar by FromSeed (RFC 8032
// Ed25519 seeds; ECDSA private scalars), or around an existing private key
// by FromPrivateKey. It signs Ed25519, ECDSA on P-256, P-384 and secp256k1
// (deterministic, low-S, as Cosmos SDK and tm2 expect) and RSA PKCS #1 v1.5
// and PSS, and implements signer.Signer. A Keyring keeps named keys and
// implements signer's key store interfaces (generate, import, list, open,
// delete).
//
// # Key material
//
// A Key holds a copy of its private key of its own, whatever it was made
// from, and Close wipes it: Ed25519 and secp256k1 keys completely; for
// P-256, P-384 and RSA keys only the math/big private values, as crypto/rsa
// and crypto/ecdsa keep copies of their own that no caller can reach, which
// Close only drops for the garbage collector. The process's memory is the
// boundary: anyone who can read it can read the keys. For keys that must
// not be exportable, use a device backend.
//
// # Concurrency
//
// Key and Keyring are safe for concurrent use. Signs run in parallel under
// a read lock; Close waits for signs in flight, then wipes, and signs after
// it fail with signer.ErrClosed.
package inprocess
