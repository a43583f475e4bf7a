package signer

import (
	"context"
	"crypto"
	"io"
)

// Signer is a private key that signs, wherever it lives: in process memory,
// in an encrypted key file, on a Ledger, in a YubiHSM 2 or behind PKCS#11.
//
// Public never does I/O: a backend reads the public key when it opens the key
// and keeps it, so Public cannot fail and still answers after Close.
//
// Sign keeps the standard library's crypto.Signer contract, so every Signer
// plugs into crypto/x509, crypto/tls and golang.org/x/crypto/ssh as it is:
//   - Ed25519: opts.HashFunc() == 0 (or *ed25519.Options with Hash 0 and no
//     Context) means msg is the whole message; crypto.SHA512 asks for
//     Ed25519ph and a Context for Ed25519ctx, which a backend may refuse
//     with an error wrapping ErrUnsupported. rand is ignored.
//   - ECDSA: digest is the hash of the message under opts.HashFunc() and
//     its length must match; the signature is ASN.1 DER, as from
//     ecdsa.SignASN1 (low-S for secp256k1).
//   - RSA: PKCS #1 v1.5 over digest, or PSS when opts is *rsa.PSSOptions.
//
// SignContext signs the whole message, hashing it first where the algorithm
// signs a digest (as crypto.MessageSigner does), and returns the signature in
// the algorithm's wire form (see Algorithm). It returns within ctx's deadline
// even when a device hangs, with an error that wraps ctx.Err(). A context
// that is already done returns at once without touching the device. Stages
// of the call are reported to the Trace carried by ctx, if any.
//
// Close releases the key: it wipes key material held in memory, ends
// device sessions and closes transports. Close is idempotent, and Sign or
// SignContext after Close return an error wrapping ErrClosed.
type Signer interface {
	crypto.Signer
	SignContext(ctx context.Context, msg []byte) ([]byte, error)
	io.Closer
}

// AlgorithmSigner is implemented by signers that say which algorithm
// SignContext uses. Every Signer in this module implements it; AlgorithmOf
// falls back to the public key for signers that do not.
type AlgorithmSigner interface {
	Signer
	Algorithm() Algorithm
}

// AlgorithmOf reports the algorithm that s.SignContext uses: s.Algorithm()
// when s implements it, else that of the signer it wraps (found through an
// Unwrap() Signer method, as on Instrumented), else the one its public key
// implies. An RSA key implies no scheme, so for such a signer AlgorithmOf
// returns an error wrapping ErrUnsupported.
func AlgorithmOf(s crypto.Signer) (Algorithm, error) {
	for cur := s; cur != nil; {
		if a, ok := cur.(interface{ Algorithm() Algorithm }); ok {
			return a.Algorithm(), nil
		}
		u, ok := cur.(interface{ Unwrap() Signer })
		if !ok {
			break
		}
		cur = u.Unwrap()
	}
	return algorithmOfKey(s.Public())
}
