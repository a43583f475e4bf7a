package yubihsm

import (
	"github.com/signerkit/signerkit/internal/keyuri"
	"github.com/signerkit/signerkit/signer"
)

func init() {
	signer.RegisterStore("yubihsm", keyuri.StoreOpener(ParseURI, func(c *Config) signer.KeyRef { return c.Key }, OpenStore))
}
