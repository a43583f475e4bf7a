package main

import (
	"crypto/ed25519"
	"fmt"
	"io"
	"slices"

	"github.com/signerkit/signerkit/daemon"
)

// identityValue prints only the value a node of protocol lists to pin this
// signer, so that a node's own config command can take it as it is:
//
//	gnoland config set consensus.priv_validator.tmkms_listener.allowed_kms_pubkeys \
//	    $(signerkit identity show -config signerkit.toml -for tm2-tmkms)
func identityValue(w io.Writer, protocol string, pub ed25519.PublicKey) error {
	if !slices.Contains(daemon.Protocols(), protocol) {
		return fmt.Errorf("signerkit identity show: -for %q: not a protocol (%v)", protocol, daemon.Protocols())
	}
	pin := daemon.IdentityPin(protocol, pub)
	if pin.Setting == "" {
		return fmt.Errorf("signerkit identity show: -for %s: %s", protocol, pin.Note)
	}
	fmt.Fprintln(w, pin.Value)
	return nil
}
