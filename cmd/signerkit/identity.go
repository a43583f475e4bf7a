package main

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"fmt"
	"io"
	"time"

	"github.com/signerkit/signerkit/daemon"
	"github.com/signerkit/signerkit/inprocess"
	"github.com/signerkit/signerkit/keyfmt"
)

// cmdIdentity is `signerkit identity show -config F`: the signer's own
// identity (the key it proves in every SecretConnection) in each node's
// format, with the node setting that pins it.
func cmdIdentity(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] != "show" {
		fmt.Fprintln(stderr, "signerkit identity: show -config F")
		return errUsage
	}
	fs := newFlags("identity show", stderr)
	path := fs.String("config", "signerkit.toml", "the config file: its identity_key and chains")
	forProto := fs.String("for", "", "print only the value the node of this protocol (tm2-tmkms, tm2-remote) lists, for a script or a node's config command")
	if err := parseFlags(fs, args[1:]); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		fmt.Fprintln(stderr, "signerkit identity show: -config F, no arguments")
		return errUsage
	}
	cfg, err := daemon.LoadConfigToInspect(*path)
	if err != nil {
		return err
	}
	if cfg.IdentityKey == "" {
		return fmt.Errorf("signerkit identity show: %s has no identity_key: signerkit proves no identity (it reaches its validators over Unix sockets only)", cfg.PathOrDefault())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := inprocess.Open(ctx, inprocess.Config{File: cfg.IdentityKey})
	if err != nil {
		return fmt.Errorf("signerkit identity show: identity_key: %w", err)
	}
	pub, ok := s.Public().(ed25519.PublicKey)
	_ = s.Close()
	if !ok {
		return fmt.Errorf("signerkit identity show: identity_key %s is not an Ed25519 key", cfg.IdentityKey)
	}
	if *forProto != "" {
		return identityValue(stdout, *forProto, pub)
	}
	identityLines(stdout, cfg, pub)
	return nil
}

func identityLines(w io.Writer, cfg *daemon.Config, pub ed25519.PublicKey) {
	fmt.Fprintf(w, "signer identity (identity_key %s)\n", cfg.IdentityKey)
	fmt.Fprintf(w, "  hex:    ed25519:%x\n", []byte(pub))
	fmt.Fprintf(w, "  base64: %s\n", base64.StdEncoding.EncodeToString(pub))
	fmt.Fprintf(w, "  gno:    %s\n", keyfmt.GnoPubKey(pub))
	for _, p := range daemon.Protocols() {
		pin := daemon.IdentityPin(p, pub)
		fmt.Fprintf(w, "\n%s%s\n", p, usedBy(cfg, p))
		if pin.Setting == "" {
			fmt.Fprintf(w, "  %s\n", pin.Note)
			continue
		}
		fmt.Fprintf(w, "  in the node's config.toml: %s = [%q]\n", pin.Setting, pin.Value)
	}
}

// usedBy names the config's chains that speak protocol.
func usedBy(cfg *daemon.Config, protocol string) string {
	s := ""
	for _, ch := range cfg.Chains {
		if ch.Protocol == protocol {
			if s == "" {
				s = " (chain " + ch.ID
			} else {
				s += ", " + ch.ID
			}
		}
	}
	if s != "" {
		s += ")"
	}
	return s
}
