package yubihsmsim

import (
	"crypto/aes"
	"crypto/ecdh"
	"crypto/sha256"
	"encoding/binary"

	"github.com/signerkit/signerkit/internal/scp03"
	"github.com/signerkit/signerkit/yubihsm"
)

// Asymmetric authentication (firmware 2.3 and later), after
// python-yubihsm's core.py (YubiHsm.get_device_public_key,
// AsymmetricAuth, AuthenticationKey.put_public_key) and Yubico's Get
// Device Public Key and Create Session pages:
//
//   - Get Device Public Key (plain, no data) answers the algorithm
//     ec-p256-yubico-authentication then X ‖ Y of the device's static P-256
//     key (PK.SD);
//   - Put Authentication Key with that algorithm takes, after the template
//     and the delegated capabilities, X ‖ Y of the host's static key
//     (PK.OCE);
//   - Create Session with such a key takes its id and the host's ephemeral
//     key EPK.OCE (65 bytes, uncompressed), and answers the session id, the
//     device's ephemeral key EPK.SD (65 bytes) and a 16-byte receipt. Both
//     sides compute the ephemeral-ephemeral and static-static ECDH secrets,
//     run the ANSI X9.63 KDF with SHA-256 over them (ephemeral first) with
//     the shared info 3c 88 10 into four AES-128 keys: the receipt key,
//     S-ENC, S-MAC and S-RMAC. The receipt is the CMAC of EPK.SD ‖ EPK.OCE
//     under the receipt key. The session is authenticated at once (there
//     is no Authenticate Session), its MAC chain starts at the receipt and
//     its counter at 1.
//
// The sim's device key is made when first needed and kept over Reset
// Device, like the attestation key.

// Asymmetric authentication's command, algorithm and sizes.
const (
	CmdGetDevicePublicKey = 0x0a
	AlgAuthECP256         = 49
	// pointLen is an uncompressed P-256 point: 04 ‖ X ‖ Y.
	pointLen = 65
)

// devicePublicKey answers Get Device Public Key.
func (d *Device) devicePublicKey(p []byte) []byte {
	if len(p) != 0 {
		return errFrame(yubihsm.CodeWrongLength)
	}
	k, err := d.deviceKey()
	if err != nil {
		return errFrame(yubihsm.CodeInvalidData)
	}
	return okFrame(CmdGetDevicePublicKey, append([]byte{AlgAuthECP256}, k.PublicKey().Bytes()[1:]...))
}

// deviceKey returns the device's static key SK.SD, made on first use.
func (d *Device) deviceKey() (*ecdh.PrivateKey, error) {
	if d.sdKey == nil {
		k, err := ecdh.P256().GenerateKey(d.rand)
		if err != nil {
			return nil, err
		}
		d.sdKey = k
	}
	return d.sdKey, nil
}

// authPublic parses the X ‖ Y of an asymmetric authentication key.
func authPublic(xy []byte) (*ecdh.PublicKey, bool) {
	if len(xy) != pointLen-1 {
		return nil, false
	}
	k, err := ecdh.P256().NewPublicKey(append([]byte{4}, xy...))
	return k, err == nil
}

// x963KDF is ANSI X9.63's KDF with SHA-256: n bytes of SHA-256(z ‖
// counter ‖ info) for counters 1, 2, …
func x963KDF(z, info []byte, n int) []byte {
	var out []byte
	for c := uint32(1); len(out) < n; c++ {
		h := sha256.New()
		h.Write(z)
		h.Write(binary.BigEndian.AppendUint32(nil, c))
		h.Write(info)
		out = h.Sum(out)
	}
	return out[:n]
}

// createSessionAsym answers Create Session with an asymmetric
// authentication key: the key's id and EPK.OCE.
func (d *Device) createSessionAsym(p []byte) []byte {
	auth := d.objects[objKey{TypeAuthKey, binary.BigEndian.Uint16(p)}]
	if auth == nil {
		return errFrame(yubihsm.CodeObjectNotFound)
	}
	if auth.authPub == nil {
		return errFrame(yubihsm.CodeWrongLength) // a symmetric key takes an 8-byte challenge
	}
	if d.algorithmOff(AlgAuthECP256) {
		return errFrame(yubihsm.CodeAlgorithmDisabled)
	}
	epkOCE, err := ecdh.P256().NewPublicKey(p[2:])
	if err != nil {
		return errFrame(yubihsm.CodeInvalidData)
	}
	slot := d.freeSlot()
	if slot < 0 {
		return errFrame(yubihsm.CodeSessionsFull)
	}
	sk, err := d.deviceKey()
	if err != nil {
		return errFrame(yubihsm.CodeInvalidData)
	}
	esk, err := ecdh.P256().GenerateKey(d.rand)
	if err != nil {
		return errFrame(yubihsm.CodeInvalidData)
	}
	shsee, err1 := esk.ECDH(epkOCE)
	shsss, err2 := sk.ECDH(auth.authPub)
	if err1 != nil || err2 != nil {
		return errFrame(yubihsm.CodeInvalidData)
	}
	shs := x963KDF(append(shsee, shsss...), []byte{0x3c, 0x88, 0x10}, 4*scp03.KeyLen)
	defer clear(shs)
	epkSD := esk.PublicKey().Bytes()
	receipt := scp03.CMAC(shs[:16], epkSD, p[2:])
	s := &session{id: byte(slot), auth: auth, lastUsed: d.clock.Now(), chain: receipt, counter: 1, authenticated: true}
	copy(s.keys.ENC[:], shs[16:32])
	copy(s.keys.MAC[:], shs[32:48])
	copy(s.keys.RMAC[:], shs[48:64])
	s.block, _ = aes.NewCipher(s.keys.ENC[:])
	d.sessions[slot] = s
	d.stats.SessionsCreated++
	out := append([]byte{s.id}, epkSD...)
	return okFrame(CmdCreateSession, append(out, receipt[:]...))
}

// freeSlot returns the lowest free session slot, or -1.
func (d *Device) freeSlot() int {
	for i, s := range d.sessions {
		if s == nil {
			return i
		}
	}
	return -1
}

// putAuthKeyAsym finishes Put Authentication Key for an asymmetric key:
// key is X ‖ Y.
func (d *Device) putAuthKeyAsym(o *object, key []byte) []byte {
	pub, ok := authPublic(key)
	if !ok {
		if len(key) != pointLen-1 {
			return errFrame(yubihsm.CodeWrongLength)
		}
		return errFrame(yubihsm.CodeInvalidData)
	}
	if d.algorithmOff(AlgAuthECP256) {
		return errFrame(yubihsm.CodeAlgorithmDisabled)
	}
	o.authPub = pub
	return d.insert(CmdPutAuthKey, o)
}
