package signertest

import (
	"crypto"
	"crypto/rand"
	"errors"

	"github.com/signerkit/signerkit/signer"
)

// checkMessageSigner: the signer is a crypto.MessageSigner, so that
// crypto.SignMessage (and crypto/x509, which calls it) hands it the whole
// message; a signature made that way verifies under the standard library,
// and options that ask for another scheme are refused before the key is
// used.
func checkMessageSigner(c *checker) {
	s := c.openSigner()
	defer s.Close()
	if _, ok := s.Signer.(crypto.MessageSigner); !ok {
		c.errorf("%T does not implement crypto.MessageSigner: give it SignMessage (signer.SignMessage does the work)", s.Signer)
		return
	}
	msg := c.message(c.size(100))
	kept := append([]byte(nil), msg...)
	sig, err := crypto.SignMessage(s.Signer, rand.Reader, msg, s.alg.SignerOpts())
	if err != nil {
		c.errorf("crypto.SignMessage with %v's options: %v", s.alg, err)
		return
	}
	if string(kept) != string(msg) {
		c.errorf("SignMessage modified the message")
	}
	if err := VerifyStd(s.alg, s.Public(), msg, sig); err != nil {
		c.errorf("crypto.SignMessage: the signature does not verify: %v", err)
	}
	other := crypto.SHA384
	if s.alg.Hash() == other {
		other = crypto.SHA512
	}
	if _, err := crypto.SignMessage(s.Signer, rand.Reader, c.message(c.size(100)), other); !errors.Is(err, signer.ErrUnsupported) {
		c.errorf("crypto.SignMessage with %v on a %v key: got %s, want an error wrapping ErrUnsupported", other, s.alg, describe(err))
	}
}
