package inprocess

import "github.com/signerkit/signerkit/signer"

// Reopen returns a new Signer over the same private key as k, so each
// check of the conformance suite can close its own.
func Reopen(k *Signer) (signer.Signer, error) { return k.clone() }
