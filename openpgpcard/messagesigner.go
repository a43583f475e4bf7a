package openpgpcard

import (
	"crypto"
	"io"

	"github.com/signerkit/signerkit/signer"
)

var _ crypto.MessageSigner = (*Signer)(nil)

// SignMessage implements crypto.MessageSigner: msg is the whole message,
// and opts must ask for the key's own scheme (see signer.SignMessage).
// rand is ignored.
func (s *Signer) SignMessage(_ io.Reader, msg []byte, opts crypto.SignerOpts) ([]byte, error) {
	return signer.SignMessage(s, msg, opts)
}
