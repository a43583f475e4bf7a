package yubihsmsim

import (
	"crypto"
	"crypto/hmac"
	"crypto/subtle"
	"encoding/binary"
	"io"
	"time"

	"github.com/signerkit/signerkit/yubihsm"
)

// HMAC keys, after Yubico's command pages (Put HMAC Key, Generate HMAC
// Key, Sign HMAC, Verify HMAC) and python-yubihsm's HmacKey: Put takes
// the object template then the key; Sign HMAC the key id then the data,
// answering the MAC; Verify HMAC the key id, the MAC (as long as the
// hash) then the data, answering one byte, 1 when it verifies and 0 when
// not.

// HMAC commands.
const (
	CmdPutHMACKey      = 0x52
	CmdSignHMAC        = 0x53
	CmdGenerateHMACKey = 0x5a
	CmdVerifyHMAC      = 0x5c
)

// The HMAC-key object type, algorithms and capabilities.
const (
	TypeHMACKey = 0x05

	AlgHMACSHA1   = 19
	AlgHMACSHA256 = 20
	AlgHMACSHA384 = 21
	AlgHMACSHA512 = 22

	CapPutHMACKey      uint64 = 1 << 0x14
	CapGenerateHMACKey uint64 = 1 << 0x15
	CapSignHMAC        uint64 = 1 << 0x16
	CapVerifyHMAC      uint64 = 1 << 0x17
	CapDeleteHMACKey   uint64 = 1 << 0x2b
)

// hmacHash is the hash of an HMAC algorithm, 0 for others.
func hmacHash(alg byte) crypto.Hash {
	switch alg {
	case AlgHMACSHA1:
		return crypto.SHA1
	case AlgHMACSHA256:
		return crypto.SHA256
	case AlgHMACSHA384:
		return crypto.SHA384
	case AlgHMACSHA512:
		return crypto.SHA512
	}
	return 0
}

// hmacCommand runs one of the HMAC commands.
func (d *Device) hmacCommand(s *session, cmd byte, p []byte) ([]byte, time.Duration) {
	switch cmd {
	case CmdPutHMACKey, CmdGenerateHMACKey:
		return d.putHMACKey(s, cmd, p), 0
	}
	return d.signHMAC(s, cmd, p)
}

// putHMACKey answers Put and Generate HMAC Key. A key put is 1 byte up to
// the hash's block size (64 bytes for SHA-1 and SHA-256, 128 for SHA-384
// and SHA-512; longer gets INVALID DATA); a generated key is as long as
// the hash's output (the sim's choice: Yubico does not publish it).
func (d *Device) putHMACKey(s *session, cmd byte, p []byte) []byte {
	if len(p) < templateLen {
		return errFrame(yubihsm.CodeWrongLength)
	}
	need := CapPutHMACKey
	if cmd == CmdGenerateHMACKey {
		need = CapGenerateHMACKey
	}
	if s.auth.caps&need == 0 {
		return errFrame(yubihsm.CodeInsufficientPermissions)
	}
	o := template(TypeHMACKey, p)
	h := hmacHash(o.alg)
	if h == 0 {
		return errFrame(yubihsm.CodeInvalidData)
	}
	key := p[templateLen:]
	switch {
	case cmd == CmdGenerateHMACKey && len(key) != 0, cmd == CmdPutHMACKey && len(key) == 0:
		return errFrame(yubihsm.CodeWrongLength)
	case len(key) > h.New().BlockSize():
		return errFrame(yubihsm.CodeInvalidData)
	}
	if !allowed(s, o) {
		return errFrame(yubihsm.CodeInsufficientPermissions)
	}
	if d.algorithmOff(o.alg) {
		return errFrame(yubihsm.CodeAlgorithmDisabled)
	}
	if cmd == CmdGenerateHMACKey {
		o.origin = 1
		key = make([]byte, h.Size())
		if _, err := io.ReadFull(d.rand, key); err != nil {
			return errFrame(yubihsm.CodeInvalidData)
		}
	}
	o.data = append([]byte(nil), key...)
	return d.insert(cmd, o)
}

// signHMAC answers Sign HMAC and Verify HMAC. Both need the key's and the
// session's capability, and at least one byte of data.
func (d *Device) signHMAC(s *session, cmd byte, p []byte) ([]byte, time.Duration) {
	if len(p) < 2 {
		return errFrame(yubihsm.CodeWrongLength), 0
	}
	o := d.objects[objKey{TypeHMACKey, binary.BigEndian.Uint16(p)}]
	if o == nil || !visible(s, o) {
		return errFrame(yubihsm.CodeObjectNotFound), 0
	}
	need := CapSignHMAC
	if cmd == CmdVerifyHMAC {
		need = CapVerifyHMAC
	}
	if o.caps&need == 0 || s.auth.caps&need == 0 {
		return errFrame(yubihsm.CodeInsufficientPermissions), 0
	}
	if d.algorithmOff(o.alg) {
		return errFrame(yubihsm.CodeAlgorithmDisabled), 0
	}
	h := hmacHash(o.alg)
	data, tag := p[2:], []byte(nil)
	if cmd == CmdVerifyHMAC {
		if len(data) < h.Size() {
			return errFrame(yubihsm.CodeWrongLength), 0
		}
		tag, data = data[:h.Size()], data[h.Size():]
	}
	if len(data) == 0 {
		return errFrame(yubihsm.CodeWrongLength), 0
	}
	m := hmac.New(h.New, o.data)
	m.Write(data)
	sum := m.Sum(nil)
	cost := d.profile.HMACSHA256
	if h.Size() > 32 {
		cost = d.profile.HMACSHA512
	}
	if cmd == CmdSignHMAC {
		return okFrame(cmd, sum), cost
	}
	return okFrame(cmd, []byte{byte(subtle.ConstantTimeCompare(sum, tag))}), cost
}
