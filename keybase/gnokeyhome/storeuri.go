package gnokeyhome

import (
	"github.com/signerkit/signerkit/internal/keyuri"
	"github.com/signerkit/signerkit/signer"
)

// A gnokeyhome: URI names a gnokey home as a store too (signer.OpenStore),
// with or without a label, so that signerkit keys list shows its local
// keys; the store writes nothing.
func init() {
	parse := func(uri string) (Config, error) { return parseURI(uri, false) }
	signer.RegisterStore("gnokeyhome", keyuri.StoreOpener(parse, func(c *Config) signer.KeyRef { return c.Key }, OpenStore))
}
