package daemon

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"fmt"

	"github.com/signerkit/signerkit/signer"
)

// notConsensusKey is the operator's message for a key that opened but
// cannot be a validator's: gno v1.7.1 and CometBFT take Ed25519
// consensus keys only. A secp256k1 key is what gnokey makes by default
// (gno's account keys), so it is the likely mistake and named as such.
func notConsensusKey(uri string, pub crypto.PublicKey) error {
	kind := fmt.Sprintf("a %T", pub)
	hint := ""
	switch k := pub.(type) {
	case *ecdsa.PublicKey:
		if k.Curve == signer.Secp256k1() {
			kind = "a secp256k1 key"
			hint = " (gnokey makes secp256k1 keys by default: they are gno account keys, which sign transactions, not blocks)"
		} else {
			kind = "an ECDSA " + k.Curve.Params().Name + " key"
		}
	case *rsa.PublicKey:
		kind = "an RSA key"
	case ed25519.PublicKey:
		kind = fmt.Sprintf("an Ed25519 key of %d bytes", len(k))
	}
	return fmt.Errorf("the key %s is %s%s: gno v1.7.1 and CometBFT validators take Ed25519 consensus keys only; make one with signerkit keys generate -to URI (Ed25519 is the default), or point key at an Ed25519 key: %w",
		RedactURI(uri), kind, hint, signer.ErrUnsupported)
}
