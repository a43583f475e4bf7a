package inprocess

import "github.com/signerkit/signerkit/signer"

// Reopen returns a new Key over the same private key as k, so each check
// of the conformance suite can close its own.
func Reopen(k *Key) (signer.Signer, error) {
	k.mu.RLock()
	defer k.mu.RUnlock()
	switch {
	case k.ed != nil:
		return FromPrivateKey(k.ed, k.alg)
	case k.k1 != nil:
		b := k.k1.Key.Bytes()
		return FromSeed(k.alg, b[:])
	case k.ec != nil:
		return FromPrivateKey(k.ec, k.alg)
	}
	return FromPrivateKey(k.rsa, k.alg)
}
