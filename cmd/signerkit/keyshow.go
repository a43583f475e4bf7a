package main

import (
	"crypto"
	"crypto/ed25519"
	"encoding/base64"
	"fmt"
	"io"
	"strings"

	"github.com/signerkit/signerkit/keyfmt"
)

// genesisPower is the voting power keyLines writes in the genesis
// entries it shows; the operator sets the chain's own.
const genesisPower = 10

// keyLines describes one public key in every form the chains take: hex,
// base64, gno's gpub1…, both addresses, and each chain's genesis
// validator entry.
func keyLines(w io.Writer, name string, pub crypto.PublicKey) {
	fmt.Fprintf(w, "%s\n", name)
	edPub, ok := pub.(ed25519.PublicKey)
	if !ok {
		fmt.Fprintf(w, "  public key:          %T (validators take Ed25519)\n", pub)
		return
	}
	fmt.Fprintf(w, "  public key (hex):    ed25519:%x\n", []byte(edPub))
	fmt.Fprintf(w, "  public key (base64): %s\n", base64.StdEncoding.EncodeToString(edPub))
	fmt.Fprintf(w, "  gno public key:      %s\n", keyfmt.GnoPubKey(edPub))
	fmt.Fprintf(w, "  gno address:         %s\n", keyfmt.GnoAddress(edPub))
	fmt.Fprintf(w, "  cometbft address:    %s\n", keyfmt.CometBFTAddress(edPub))
	fmt.Fprintf(w, "  cometbft genesis validator (set power and name):\n%s\n", indent(keyfmt.CometBFTGenesisValidator(edPub, genesisPower, "validator").JSON()))
	fmt.Fprintf(w, "  gno genesis validator (set power and name):\n%s\n", indent(keyfmt.GnoGenesisValidator(edPub, genesisPower, "validator").JSON()))
}

// indent indents each line of b by four spaces.
func indent(b []byte) string {
	return "    " + strings.ReplaceAll(string(b), "\n", "\n    ")
}
