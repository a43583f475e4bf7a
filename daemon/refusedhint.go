package daemon

import (
	"errors"
	"io"
	"log/slog"
)

// identityHint logs the likely cause when a TCP connection to a gno node
// ends with EOF in its handshake, or after it and before any request:
// the node's allowlist (tcp_authorized_keys, allowed_kms_pubkeys) lacks
// this signer's identity, and the node hangs up without saying why. It
// logs the identity as that setting takes it, at most once a second.
// CometBFT's listener pins no signer key, so nothing is logged for it.
func (d *Daemon) identityHint(v *validator, err error, reason string, log *slog.Logger) {
	if d.id == nil || v.network != "tcp" {
		return
	}
	eof := errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
	switch {
	case reason == "handshake" && eof:
	case reason == "eof" && v.requests.Load() == v.requestsAtConnect.Load():
	default:
		return
	}
	pin := IdentityPin(v.protocol, d.IdentityKey())
	if pin.Setting == "" {
		return
	}
	if ok, quiet := v.eofLog.allow(); ok {
		log.Warn("the node closed the connection before any request: its allowlist likely lacks this signer's identity",
			"fix", "add the identity to the node's "+pin.Setting+" and restart the node (signerkit identity show prints it)",
			"identity", pin.Value, "unlogged_since_last", quiet)
	}
}
