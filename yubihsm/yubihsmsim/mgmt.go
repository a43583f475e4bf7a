package yubihsmsim

import (
	"encoding/binary"

	"github.com/signerkit/signerkit/internal/scp03"
	"github.com/signerkit/signerkit/yubihsm"
)

// Key-management and inspection commands: storage info, opaque objects,
// authentication keys. Wire formats follow Yubico's SDK (python-yubihsm
// core.py and objects.py, libyubihsm lib/yubihsm.c).

// Storage geometry the sim reports on Get Storage Info: the YubiHSM 2's
// 256 object records and 1024 pages of 126 bytes.
const (
	StorageRecords  = 256
	StoragePages    = 1024
	StoragePageSize = 126
)

// MaxOpaque is the most data a Put Opaque carries: what fits one session
// message of 3139 bytes after the 53-byte object template (a larger one
// cannot reach the device, whose buffer refuses the frame).
const MaxOpaque = MaxPseudoRandom - 2 - 40 - 2 - 8 - 1

// pages is how many storage pages an object takes in the sim's accounting.
func pages(o *object) int {
	n := int(keySize(o))
	if n == 0 {
		return 1
	}
	return (n + StoragePageSize - 1) / StoragePageSize
}

// storageInfo answers Get Storage Info (no data): total and free records,
// total and free pages, page size, each two bytes big-endian, as
// libyubihsm's yh_util_get_storage_info reads them. It needs no
// capability.
func (d *Device) storageInfo(p []byte) []byte {
	if len(p) != 0 {
		return errFrame(yubihsm.CodeWrongLength)
	}
	used := 0
	for _, o := range d.objects {
		used += pages(o)
	}
	out := binary.BigEndian.AppendUint16(nil, StorageRecords)
	out = binary.BigEndian.AppendUint16(out, uint16(max(StorageRecords-len(d.objects), 0)))
	out = binary.BigEndian.AppendUint16(out, StoragePages)
	out = binary.BigEndian.AppendUint16(out, uint16(max(StoragePages-used, 0)))
	out = binary.BigEndian.AppendUint16(out, StoragePageSize)
	return okFrame(CmdGetStorageInfo, out)
}

// template parses the object template that Put commands start with: id,
// 40-byte label, domains, capabilities, algorithm (53 bytes).
func template(typ byte, p []byte) *object {
	o := &object{typ: typ, id: binary.BigEndian.Uint16(p), origin: 2}
	copy(o.label[:], p[2:42])
	o.domains = binary.BigEndian.Uint16(p[42:44])
	o.caps = binary.BigEndian.Uint64(p[44:52])
	o.alg = p[52]
	return o
}

// allowed reports whether the session may create o: o's domains non-empty
// and within the session's, o's capabilities (and delegated capabilities)
// within what the session's key delegates.
func allowed(s *session, o *object) bool {
	return o.domains != 0 && o.domains&^s.auth.domains == 0 &&
		o.caps&^s.auth.delegated == 0 && o.delegated&^s.auth.delegated == 0
}

// insert stores a new object, picking a free id for id 0, and answers cmd
// with the id.
func (d *Device) insert(cmd byte, o *object) []byte {
	if o.id == 0 {
		if o.id = d.freeIDOf(o.typ); o.id == 0 {
			return errFrame(yubihsm.CodeStorageFailed)
		}
	}
	k := objKey{o.typ, o.id}
	if d.objects[k] != nil {
		return errFrame(yubihsm.CodeObjectExists)
	}
	if len(d.objects) >= StorageRecords {
		return errFrame(yubihsm.CodeStorageFailed)
	}
	d.objects[k] = o
	return okFrame(cmd, binary.BigEndian.AppendUint16(nil, o.id))
}

// putOpaque answers Put Opaque: the template (algorithm opaque data or
// X.509 certificate) then the data, at least one byte; it needs the
// put-opaque capability.
func (d *Device) putOpaque(s *session, p []byte) []byte {
	if len(p) < templateLen+1 {
		return errFrame(yubihsm.CodeWrongLength)
	}
	if s.auth.caps&CapPutOpaque == 0 {
		return errFrame(yubihsm.CodeInsufficientPermissions)
	}
	o := template(TypeOpaque, p)
	if o.alg != AlgOpaqueData && o.alg != AlgOpaqueX509 {
		return errFrame(yubihsm.CodeInvalidData)
	}
	if !allowed(s, o) {
		return errFrame(yubihsm.CodeInsufficientPermissions)
	}
	if d.algorithmOff(o.alg) {
		return errFrame(yubihsm.CodeAlgorithmDisabled)
	}
	o.data = append([]byte(nil), p[templateLen:]...)
	return d.insert(CmdPutOpaque, o)
}

// getOpaque answers Get Opaque: two bytes of id, the data back; it needs
// the get-opaque capability.
func (d *Device) getOpaque(s *session, p []byte) []byte {
	if len(p) != 2 {
		return errFrame(yubihsm.CodeWrongLength)
	}
	if binary.BigEndian.Uint16(p) == 0 && s.auth.caps&CapGetOpaque != 0 {
		// Object 0: the device's attestation certificate (attest.go).
		a, err := d.deviceAttestation()
		if err != nil {
			return errFrame(yubihsm.CodeInvalidData)
		}
		return okFrame(CmdGetOpaque, a.cert.Raw)
	}
	o := d.objects[objKey{TypeOpaque, binary.BigEndian.Uint16(p)}]
	if o == nil || !visible(s, o) {
		return errFrame(yubihsm.CodeObjectNotFound)
	}
	if s.auth.caps&CapGetOpaque == 0 {
		return errFrame(yubihsm.CodeInsufficientPermissions)
	}
	return okFrame(CmdGetOpaque, o.data)
}

// putAuthKey answers Put Authentication Key: the template (algorithm
// AES-128 Yubico authentication), eight bytes of delegated capabilities,
// then K-ENC and K-MAC; it needs the put-authentication-key capability.
// With the algorithm ec-p256-yubico-authentication it takes X ‖ Y of the
// host's P-256 key instead (asymauth.go).
func (d *Device) putAuthKey(s *session, p []byte) []byte {
	if len(p) < templateLen+8 {
		return errFrame(yubihsm.CodeWrongLength)
	}
	if s.auth.caps&CapPutAuthKey == 0 {
		return errFrame(yubihsm.CodeInsufficientPermissions)
	}
	o := template(TypeAuthKey, p)
	o.delegated = binary.BigEndian.Uint64(p[templateLen:])
	key := p[templateLen+8:]
	if o.alg == AlgAuthECP256 {
		if !allowed(s, o) {
			return errFrame(yubihsm.CodeInsufficientPermissions)
		}
		return d.putAuthKeyAsym(o, key)
	}
	if o.alg != AlgAuthAES {
		return errFrame(yubihsm.CodeInvalidData)
	}
	if d.algorithmOff(o.alg) {
		return errFrame(yubihsm.CodeAlgorithmDisabled)
	}
	if len(key) != 2*scp03.KeyLen {
		return errFrame(yubihsm.CodeWrongLength)
	}
	if !allowed(s, o) {
		return errFrame(yubihsm.CodeInsufficientPermissions)
	}
	copy(o.enc[:], key[:scp03.KeyLen])
	copy(o.mac[:], key[scp03.KeyLen:])
	return d.insert(CmdPutAuthKey, o)
}

// changeAuthKey answers Change Authentication Key: id, algorithm, then
// K-ENC and K-MAC, or X ‖ Y for an asymmetric key; it answers the id. It
// needs the change-authentication-key capability and, as on the device,
// changes only the key the session was opened with: naming another key
// gets INVALID ID (python-yubihsm's test_change_password), and the
// algorithm must be the key's (INVALID DATA). The open session keeps its
// session keys.
func (d *Device) changeAuthKey(s *session, p []byte) []byte {
	if len(p) < 3 {
		return errFrame(yubihsm.CodeWrongLength)
	}
	if s.auth.caps&CapChangeAuthKey == 0 {
		return errFrame(yubihsm.CodeInsufficientPermissions)
	}
	id := binary.BigEndian.Uint16(p)
	if p[2] != AlgAuthAES && p[2] != AlgAuthECP256 {
		return errFrame(yubihsm.CodeInvalidData)
	}
	want := 3 + 2*scp03.KeyLen
	if p[2] == AlgAuthECP256 {
		want = 3 + pointLen - 1
	}
	if len(p) != want {
		return errFrame(yubihsm.CodeWrongLength)
	}
	o := d.objects[objKey{TypeAuthKey, id}]
	if o == nil || !visible(s, o) {
		return errFrame(yubihsm.CodeObjectNotFound)
	}
	if o != s.auth {
		return errFrame(yubihsm.CodeInvalidID)
	}
	if o.alg != p[2] {
		return errFrame(yubihsm.CodeInvalidData)
	}
	if o.authPub != nil {
		pub, ok := authPublic(p[3:])
		if !ok {
			return errFrame(yubihsm.CodeInvalidData)
		}
		o.authPub = pub
	} else {
		copy(o.enc[:], p[3:3+scp03.KeyLen])
		copy(o.mac[:], p[3+scp03.KeyLen:])
	}
	o.seq++
	return okFrame(CmdChangeAuthKey, binary.BigEndian.AppendUint16(nil, id))
}
