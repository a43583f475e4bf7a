package pkcs11

import (
	"github.com/signerkit/signerkit/internal/keyuri"
	"github.com/signerkit/signerkit/signer"
)

func init() {
	signer.RegisterStore("pkcs11", keyuri.StoreOpener(ParseURI, func(c *Config) signer.KeyRef { return c.Key }, OpenStore))
}
