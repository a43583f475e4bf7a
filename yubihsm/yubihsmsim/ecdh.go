package yubihsmsim

import (
	"encoding/binary"

	"github.com/decred/dcrd/dcrec/secp256k1/v4"

	"github.com/signerkit/signerkit/yubihsm"
)

// Derive ECDH, after Yubico's command page and python-yubihsm's
// AsymmetricKey.derive_ecdh: the key id, then the peer's public key
// uncompressed (04 ‖ X ‖ Y); the answer is the shared secret, the X
// coordinate of the shared point. The key needs derive-ecdh, as does the
// session's key.

// CmdDeriveECDH is Derive ECDH; AlgECDH the algorithm the toggle has for
// it; CapDeriveECDH the capability.
const (
	CmdDeriveECDH        = 0x57
	AlgECDH              = 24
	CapDeriveECDH uint64 = 1 << 0x0b
)

func (d *Device) deriveECDH(s *session, p []byte) []byte {
	if len(p) < 2 {
		return errFrame(yubihsm.CodeWrongLength)
	}
	o := d.objects[objKey{TypeAsymmetric, binary.BigEndian.Uint16(p)}]
	if o == nil || !visible(s, o) {
		return errFrame(yubihsm.CodeObjectNotFound)
	}
	if o.ec == nil && o.k1 == nil {
		return errFrame(yubihsm.CodeInvalidCommand)
	}
	if o.caps&CapDeriveECDH == 0 || s.auth.caps&CapDeriveECDH == 0 {
		return errFrame(yubihsm.CodeInsufficientPermissions)
	}
	if d.algorithmOff(o.alg) || d.algorithmOff(AlgECDH) {
		return errFrame(yubihsm.CodeAlgorithmDisabled)
	}
	peer := p[2:]
	if len(peer) != 1+2*scalarLen(o.alg) {
		return errFrame(yubihsm.CodeWrongLength)
	}
	if o.k1 != nil {
		pub, err := secp256k1.ParsePubKey(peer)
		if err != nil || peer[0] != 4 {
			return errFrame(yubihsm.CodeInvalidData)
		}
		return okFrame(CmdDeriveECDH, secp256k1.GenerateSharedSecret(o.k1, pub))
	}
	priv, err := o.ec.ECDH()
	if err != nil {
		return errFrame(yubihsm.CodeInvalidData)
	}
	pub, err := priv.Curve().NewPublicKey(peer)
	if err != nil {
		return errFrame(yubihsm.CodeInvalidData)
	}
	secret, err := priv.ECDH(pub)
	if err != nil {
		return errFrame(yubihsm.CodeInvalidData)
	}
	return okFrame(CmdDeriveECDH, secret)
}
