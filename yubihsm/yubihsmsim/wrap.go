package yubihsmsim

import (
	"crypto/aes"
	"encoding/binary"
	"io"

	"github.com/signerkit/signerkit/internal/ccm"
	"github.com/signerkit/signerkit/internal/eckey"
	"github.com/signerkit/signerkit/yubihsm"
)

// Wrap keys, and objects exported and imported under them, after Yubico's
// command reference (Put Wrap Key, Generate Wrap Key, Export Wrapped,
// Import Wrapped) and the object format of Yubico's yubihsm-wrap tool
// (yhwrap/main.c), whose output a device imports.

// Wrap commands.
const (
	CmdExportWrapped   = 0x4a
	CmdImportWrapped   = 0x4b
	CmdPutWrapKey      = 0x4c
	CmdGenerateWrapKey = 0x5b
)

// The wrap-key object type, algorithms and capabilities.
const (
	TypeWrapKey = 0x04

	AlgAES128CCMWrap = 29
	AlgAES192CCMWrap = 41
	AlgAES256CCMWrap = 42

	CapExportWrapped       uint64 = 0x1000
	CapImportWrapped       uint64 = 0x2000
	CapPutWrapKey          uint64 = 0x4000
	CapGenerateWrapKey     uint64 = 0x8000
	CapExportableUnderWrap uint64 = 0x10000
	CapDeleteWrapKey       uint64 = 1 << 42
)

// WrapNonceLen and WrapTagLen are the sizes of AES-CCM's nonce and tag
// under a wrap key: an export is nonce ‖ ciphertext ‖ tag.
const (
	WrapNonceLen = ccm.NonceSize
	WrapTagLen   = ccm.TagSize
)

// wrapHeaderLen is the size of a wrapped object's header: the wrap key's
// algorithm (1), capabilities (8), id (2), the length of what follows (2),
// domains (2), type (1), algorithm (1), sequence (1), origin (1), label
// (40).
const wrapHeaderLen = 59

// originWrapped is the origin bit of an object imported under wrap.
const originWrapped = 0x10

// wrapKeyLen is the AES key size of each wrap algorithm.
func wrapKeyLen(alg byte) int {
	switch alg {
	case AlgAES128CCMWrap:
		return 16
	case AlgAES192CCMWrap:
		return 24
	case AlgAES256CCMWrap:
		return 32
	}
	return 0
}

// wrapCommand runs one of the wrap commands.
func (d *Device) wrapCommand(s *session, cmd byte, p []byte) []byte {
	switch cmd {
	case CmdExportWrapped:
		return d.exportWrapped(s, p)
	case CmdImportWrapped:
		return d.importWrapped(s, p)
	}
	return d.putWrapKey(s, cmd, p)
}

// putWrapKey answers Put Wrap Key and Generate Wrap Key: the object
// template, eight bytes of delegated capabilities and, for Put, the AES
// key; it answers the new id. They need the put-wrap-key or
// generate-wrap-key capability, and the new key's capabilities and
// delegated capabilities within what the session's key delegates.
func (d *Device) putWrapKey(s *session, cmd byte, p []byte) []byte {
	if len(p) < templateLen+8 {
		return errFrame(yubihsm.CodeWrongLength)
	}
	need := CapPutWrapKey
	if cmd == CmdGenerateWrapKey {
		need = CapGenerateWrapKey
	}
	if s.auth.caps&need == 0 {
		return errFrame(yubihsm.CodeInsufficientPermissions)
	}
	o := template(TypeWrapKey, p)
	o.delegated = binary.BigEndian.Uint64(p[templateLen:])
	n := wrapKeyLen(o.alg)
	if n == 0 {
		return errFrame(yubihsm.CodeInvalidData)
	}
	key := p[templateLen+8:]
	switch {
	case cmd == CmdPutWrapKey && len(key) != n, cmd == CmdGenerateWrapKey && len(key) != 0:
		return errFrame(yubihsm.CodeWrongLength)
	}
	if !allowed(s, o) {
		return errFrame(yubihsm.CodeInsufficientPermissions)
	}
	if d.algorithmOff(o.alg) {
		return errFrame(yubihsm.CodeAlgorithmDisabled)
	}
	if cmd == CmdGenerateWrapKey {
		o.origin = 1
		key = make([]byte, n)
		if _, err := io.ReadFull(d.rand, key); err != nil {
			return errFrame(yubihsm.CodeInvalidData)
		}
	}
	o.wrap = append([]byte(nil), key...)
	return d.insert(cmd, o)
}

// wrapKey finds the wrap key a command names and checks that it, and the
// session's key, have capability need.
func (d *Device) wrapKey(s *session, id uint16, need uint64) (*object, []byte) {
	w := d.objects[objKey{TypeWrapKey, id}]
	if w == nil || !visible(s, w) {
		return nil, errFrame(yubihsm.CodeObjectNotFound)
	}
	if s.auth.caps&need == 0 || w.caps&need == 0 {
		return nil, errFrame(yubihsm.CodeInsufficientPermissions)
	}
	if d.algorithmOff(w.alg) {
		return nil, errFrame(yubihsm.CodeAlgorithmDisabled)
	}
	return w, nil
}

// exportWrapped answers Export Wrapped: the wrap key's id (2), the
// object's type (1) and id (2); firmware 2.4 takes a format byte after
// them, of which the sim knows format 0 only. The answer is the nonce,
// then the object sealed under the wrap key. The session's key and the
// wrap key need export-wrapped, the object exportable-under-wrap, and its
// capabilities must be within the wrap key's delegated ones.
func (d *Device) exportWrapped(s *session, p []byte) []byte {
	if len(p) != 5 && len(p) != 6 {
		return errFrame(yubihsm.CodeWrongLength)
	}
	if len(p) == 6 && p[5] != 0 {
		return errFrame(yubihsm.CodeInvalidData)
	}
	w, errResp := d.wrapKey(s, binary.BigEndian.Uint16(p), CapExportWrapped)
	if w == nil {
		return errResp
	}
	o := d.objects[objKey{p[2], binary.BigEndian.Uint16(p[3:])}]
	if o == nil || !visible(s, o) {
		return errFrame(yubihsm.CodeObjectNotFound)
	}
	if o.caps&CapExportableUnderWrap == 0 || o.caps&^w.delegated != 0 || o.delegated&^w.delegated != 0 {
		return errFrame(yubihsm.CodeInsufficientPermissions)
	}
	plain := wrapPlain(w.alg, o)
	defer clear(plain)
	nonce := make([]byte, WrapNonceLen)
	if _, err := io.ReadFull(d.rand, nonce); err != nil {
		return errFrame(yubihsm.CodeInvalidData)
	}
	block, _ := aes.NewCipher(w.wrap)
	return okFrame(CmdExportWrapped, append(nonce, ccm.Seal(block, nonce, plain)...))
}

// wrapPlain is o as it is sealed: the header, then its key material (an
// authentication or wrap key's delegated capabilities first).
func wrapPlain(wrapAlg byte, o *object) []byte {
	var body []byte
	switch o.typ {
	case TypeAsymmetric:
		if o.ed != nil {
			body = o.ed.wrapped()
		} else {
			body = make([]byte, 96) // d ‖ X ‖ Y
			eckey.Scalar(o.ec).FillBytes(body[:32])
			copy(body[32:], publicBytes(o))
		}
	case TypeAuthKey:
		body = binary.BigEndian.AppendUint64(nil, o.delegated)
		body = append(append(body, o.enc[:]...), o.mac[:]...)
	case TypeWrapKey:
		body = append(binary.BigEndian.AppendUint64(nil, o.delegated), o.wrap...)
	default:
		body = append([]byte(nil), o.data...)
	}
	out := append(make([]byte, 0, wrapHeaderLen+len(body)), wrapAlg)
	out = binary.BigEndian.AppendUint64(out, o.caps)
	out = binary.BigEndian.AppendUint16(out, o.id)
	out = binary.BigEndian.AppendUint16(out, uint16(len(body)))
	out = binary.BigEndian.AppendUint16(out, o.domains)
	out = append(out, o.typ, o.alg, o.seq, o.origin)
	out = append(out, o.label[:]...)
	out = append(out, body...)
	clear(body)
	return out
}

// importWrapped answers Import Wrapped: the wrap key's id (2), the nonce
// (13), the sealed object; it answers the object's type (1) and id (2).
// The session's key and the wrap key need import-wrapped; the object must
// open under the wrap key (else INVALID DATA), name that key's algorithm,
// have its capabilities within the wrap key's delegated ones and its
// domains within the session's, and its id must be free.
func (d *Device) importWrapped(s *session, p []byte) []byte {
	if len(p) < 2+WrapNonceLen+WrapTagLen+wrapHeaderLen {
		return errFrame(yubihsm.CodeWrongLength)
	}
	w, errResp := d.wrapKey(s, binary.BigEndian.Uint16(p), CapImportWrapped)
	if w == nil {
		return errResp
	}
	block, _ := aes.NewCipher(w.wrap)
	plain, err := ccm.Open(block, p[2:2+WrapNonceLen], p[2+WrapNonceLen:])
	if err != nil {
		return errFrame(yubihsm.CodeInvalidData)
	}
	defer clear(plain)
	o, code := parseWrapped(w.alg, plain)
	if o == nil {
		return errFrame(code)
	}
	if o.caps&^w.delegated != 0 || o.delegated&^w.delegated != 0 || o.domains == 0 || o.domains&^s.auth.domains != 0 {
		return errFrame(yubihsm.CodeInsufficientPermissions)
	}
	if d.algorithmOff(o.alg) {
		return errFrame(yubihsm.CodeAlgorithmDisabled)
	}
	resp := d.insert(CmdImportWrapped, o)
	if resp[0] == CmdError {
		return resp
	}
	return okFrame(CmdImportWrapped, append([]byte{o.typ}, resp[3:]...))
}

// parseWrapped decodes an opened wrapped object: INVALID DATA for a header
// or key material the sim cannot take.
func parseWrapped(wrapAlg byte, b []byte) (*object, yubihsm.ErrorCode) {
	if len(b) < wrapHeaderLen || b[0] != wrapAlg {
		return nil, yubihsm.CodeInvalidData
	}
	body := b[wrapHeaderLen:]
	if int(binary.BigEndian.Uint16(b[11:])) != len(body) {
		return nil, yubihsm.CodeInvalidData
	}
	o := &object{
		caps:    binary.BigEndian.Uint64(b[1:]),
		id:      binary.BigEndian.Uint16(b[9:]),
		domains: binary.BigEndian.Uint16(b[13:]),
		typ:     b[15], alg: b[16], seq: b[17], origin: b[18] | originWrapped,
	}
	copy(o.label[:], b[19:wrapHeaderLen])
	if o.id == 0 {
		return nil, yubihsm.CodeInvalidData
	}
	var err error
	switch {
	case o.typ == TypeAsymmetric && o.alg == AlgEd25519:
		o.ed, err = edKeyFromWrapped(body)
	case o.typ == TypeAsymmetric && o.alg == AlgP256 && len(body) == 96:
		o.ec, err = p256FromScalar(body[:32])
		if err == nil && string(publicBytes(o)) != string(body[32:]) {
			err = errEdWrapped
		}
	case o.typ == TypeAuthKey && o.alg == AlgAuthAES && len(body) == 8+32:
		o.delegated = binary.BigEndian.Uint64(body)
		copy(o.enc[:], body[8:24])
		copy(o.mac[:], body[24:])
	case o.typ == TypeWrapKey && wrapKeyLen(o.alg) != 0 && len(body) == 8+wrapKeyLen(o.alg):
		o.delegated = binary.BigEndian.Uint64(body)
		o.wrap = append([]byte(nil), body[8:]...)
	case o.typ == TypeOpaque && (o.alg == AlgOpaqueData || o.alg == AlgOpaqueX509) && len(body) > 0:
		o.data = append([]byte(nil), body...)
	default:
		return nil, yubihsm.CodeInvalidData
	}
	if err != nil {
		return nil, yubihsm.CodeInvalidData
	}
	return o, 0
}
