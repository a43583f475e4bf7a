package yubihsmsim

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/binary"
	"io"
	"slices"
	"time"

	"github.com/signerkit/signerkit/internal/scp03"
	"github.com/signerkit/signerkit/yubihsm"
)

// The commands run inside a session, on the device's objects.

// visible reports whether the session's authentication key shares a
// domain with o.
func visible(s *session, o *object) bool { return s.auth.domains&o.domains != 0 }

func (d *Device) inner(s *session, f scp03.Frame) ([]byte, time.Duration) {
	p := f.Payload
	switch f.Cmd {
	case CmdEcho:
		d.stats.Echoes++
		return okFrame(CmdEcho, p), 0
	case CmdDeviceInfo:
		return d.deviceInfo(p), 0
	case CmdGetPseudoRandom:
		return d.pseudoRandom(s, p), 0
	case CmdBlinkDevice:
		// The sim has no LED: it accepts the blink (one byte, the
		// seconds) and answers as the device does, with no data.
		if len(p) != 1 {
			return errFrame(yubihsm.CodeWrongLength), 0
		}
		d.stats.Blinks++
		return okFrame(CmdBlinkDevice, nil), 0
	case CmdGetLogEntries:
		return d.getLogEntries(s, p), 0
	case CmdSetLogIndex:
		return d.setLogIndex(s, p), 0
	case CmdGetOption:
		return d.getOption(s, p), 0
	case CmdSetOption:
		return d.setOption(s, p), 0
	case CmdGetStorageInfo:
		return d.storageInfo(p), 0
	case CmdPutOpaque:
		return d.putOpaque(s, p), 0
	case CmdGetOpaque:
		return d.getOpaque(s, p), 0
	case CmdPutAuthKey:
		return d.putAuthKey(s, p), 0
	case CmdChangeAuthKey:
		return d.changeAuthKey(s, p), 0
	case CmdCloseSession:
		if len(p) != 0 {
			return errFrame(yubihsm.CodeWrongLength), 0
		}
		return okFrame(CmdCloseSession, nil), 0
	case CmdPutAsymmetricKey, CmdGenerateAsymKey:
		return d.storeKey(s, f.Cmd, p), 0
	case CmdPutWrapKey, CmdGenerateWrapKey, CmdExportWrapped, CmdImportWrapped:
		return d.wrapCommand(s, f.Cmd, p), 0
	case CmdGetPublicKey:
		if len(p) != 2 && len(p) != 3 {
			return errFrame(yubihsm.CodeWrongLength), 0
		}
		o := d.objects[objKey{TypeAsymmetric, binary.BigEndian.Uint16(p)}]
		if o == nil || !visible(s, o) {
			return errFrame(yubihsm.CodeObjectNotFound), 0
		}
		pub := publicBytes(o)
		if o.ed != nil && d.take(FaultSmallOrderKey) {
			pub = identityPoint
		}
		return okFrame(CmdGetPublicKey, append([]byte{o.alg}, pub...)), 0
	case CmdSignEdDSA, CmdSignECDSA:
		return d.sign(s, f.Cmd, p)
	case CmdListObjects:
		return d.list(s, p), 0
	case CmdGetObjectInfo:
		if len(p) != 3 {
			return errFrame(yubihsm.CodeWrongLength), 0
		}
		o := d.objects[objKey{p[2], binary.BigEndian.Uint16(p)}]
		if o == nil || !visible(s, o) {
			return errFrame(yubihsm.CodeObjectNotFound), 0
		}
		return okFrame(CmdGetObjectInfo, objectInfo(o)), 0
	case CmdDeleteObject:
		if len(p) != 3 {
			return errFrame(yubihsm.CodeWrongLength), 0
		}
		k := objKey{p[2], binary.BigEndian.Uint16(p)}
		o := d.objects[k]
		if o == nil || !visible(s, o) {
			return errFrame(yubihsm.CodeObjectNotFound), 0
		}
		need := CapDeleteAsymmetric
		switch o.typ {
		case TypeAuthKey:
			need = CapDeleteAuthKey
		case TypeOpaque:
			need = CapDeleteOpaque
		case TypeWrapKey:
			need = CapDeleteWrapKey
		}
		if s.auth.caps&need == 0 {
			return errFrame(yubihsm.CodeInsufficientPermissions), 0
		}
		delete(d.objects, k)
		return okFrame(CmdDeleteObject, nil), 0
	}
	return errFrame(yubihsm.CodeInvalidCommand), 0
}

// MaxPseudoRandom is the most bytes Get Pseudo Random returns: the most
// whose session response still fits a 3139-byte frame (the device's
// 3136-byte buffer and the header): an inner frame of 3+n bytes, padded to
// 16 with at least one byte, then 3 of header, 1 of session id and 8 of
// R-MAC. A larger request gets WRONG LENGTH.
const MaxPseudoRandom = (3139-3-1-8)/16*16 - 1 - 3

// pseudoRandom answers Get Pseudo Random: two bytes of length, big-endian;
// the session's authentication key needs the get-pseudo-random capability.
func (d *Device) pseudoRandom(s *session, p []byte) []byte {
	if len(p) != 2 {
		return errFrame(yubihsm.CodeWrongLength)
	}
	if s.auth.caps&CapGetPseudoRandom == 0 {
		return errFrame(yubihsm.CodeInsufficientPermissions)
	}
	n := int(binary.BigEndian.Uint16(p))
	if n > MaxPseudoRandom {
		return errFrame(yubihsm.CodeWrongLength)
	}
	out := make([]byte, n)
	if _, err := io.ReadFull(d.rand, out); err != nil {
		return errFrame(yubihsm.CodeInvalidData)
	}
	return okFrame(CmdGetPseudoRandom, out)
}

func publicBytes(o *object) []byte {
	if o.ed != nil {
		return o.ed.public()
	}
	pt, err := o.ec.PublicKey.Bytes() // 04 ‖ X ‖ Y
	if err != nil {
		panic("yubihsmsim: an invalid P-256 key in an object: " + err.Error()) // every key is made valid
	}
	return pt[1:] // X ‖ Y, no 04 prefix
}

func objectInfo(o *object) []byte {
	out := make([]byte, 0, 66)
	out = binary.BigEndian.AppendUint64(out, o.caps)
	out = binary.BigEndian.AppendUint16(out, o.id)
	out = binary.BigEndian.AppendUint16(out, keySize(o))
	out = binary.BigEndian.AppendUint16(out, o.domains)
	out = append(out, o.typ, o.alg, o.seq, o.origin)
	out = append(out, o.label[:]...)
	return binary.BigEndian.AppendUint64(out, o.delegated)
}

// keySize is the size of an object's stored key material: an Ed25519
// seed, a P-256 scalar, an authentication key's K-ENC ‖ K-MAC, or an
// opaque object's data.
func keySize(o *object) uint16 {
	switch {
	case o.typ == TypeOpaque:
		return uint16(len(o.data))
	case o.typ == TypeWrapKey:
		return uint16(len(o.wrap))
	case o.ed != nil:
		return seedSize
	case o.ec != nil:
		return 32
	}
	return 2 * scp03.KeyLen
}

// templateLen is the length of the object template Put commands start
// with: id, label, domains, capabilities, algorithm.
const templateLen = 2 + 40 + 2 + 8 + 1

func (d *Device) storeKey(s *session, cmd byte, p []byte) []byte {
	const hdr = templateLen
	if len(p) < hdr {
		return errFrame(yubihsm.CodeWrongLength)
	}
	need := CapGenerateAsym
	if cmd == CmdPutAsymmetricKey {
		need = CapPutAsymmetric
	}
	if s.auth.caps&need == 0 {
		return errFrame(yubihsm.CodeInsufficientPermissions)
	}
	o := &object{typ: TypeAsymmetric, id: binary.BigEndian.Uint16(p), origin: 1}
	copy(o.label[:], p[2:42])
	o.domains = binary.BigEndian.Uint16(p[42:44])
	o.caps = binary.BigEndian.Uint64(p[44:52])
	o.alg = p[52]
	key := p[hdr:]
	if o.domains == 0 || o.domains&^s.auth.domains != 0 || o.caps&^s.auth.delegated != 0 {
		return errFrame(yubihsm.CodeInsufficientPermissions)
	}
	if cmd == CmdGenerateAsymKey && len(key) != 0 {
		return errFrame(yubihsm.CodeWrongLength)
	}
	if d.algorithmOff(o.alg) {
		return errFrame(yubihsm.CodeAlgorithmDisabled)
	}
	var err error
	switch o.alg {
	case AlgEd25519:
		if cmd == CmdPutAsymmetricKey {
			if len(key) != seedSize {
				return errFrame(yubihsm.CodeWrongLength)
			}
			o.ed = edKeyFromSeed(key)
		} else {
			seed := make([]byte, seedSize)
			if _, err = io.ReadFull(d.rand, seed); err == nil {
				o.ed = edKeyFromSeed(seed)
			}
			clear(seed)
		}
	case AlgP256:
		if cmd == CmdPutAsymmetricKey {
			if len(key) != 32 {
				return errFrame(yubihsm.CodeWrongLength)
			}
			o.ec, err = p256FromScalar(key)
		} else {
			o.ec, err = ecdsa.GenerateKey(elliptic.P256(), d.rand)
		}
	default:
		return errFrame(yubihsm.CodeInvalidData)
	}
	if err != nil {
		return errFrame(yubihsm.CodeInvalidData)
	}
	if cmd == CmdPutAsymmetricKey {
		o.origin = 2
	}
	if o.id == 0 {
		if o.id = d.freeIDOf(TypeAsymmetric); o.id == 0 {
			return errFrame(yubihsm.CodeInvalidData)
		}
	}
	if d.objects[objKey{TypeAsymmetric, o.id}] != nil {
		return errFrame(yubihsm.CodeObjectExists)
	}
	d.objects[objKey{TypeAsymmetric, o.id}] = o
	return okFrame(cmd, binary.BigEndian.AppendUint16(nil, o.id))
}

// freeIDOf picks a random free object id of type typ, as the device does
// when asked for id 0, so that clients cannot rely on small ids.
func (d *Device) freeIDOf(typ byte) uint16 {
	var b [2]byte
	for range 64 {
		if _, err := io.ReadFull(d.rand, b[:]); err != nil {
			break
		}
		id := binary.BigEndian.Uint16(b[:])
		if id != 0 && id != 0xffff && d.objects[objKey{typ, id}] == nil {
			return id
		}
	}
	for id := uint16(1); id < 0xffff; id++ {
		if d.objects[objKey{typ, id}] == nil {
			return id
		}
	}
	return 0
}

func (d *Device) sign(s *session, cmd byte, p []byte) ([]byte, time.Duration) {
	if len(p) < 2 {
		return errFrame(yubihsm.CodeWrongLength), 0
	}
	o := d.objects[objKey{TypeAsymmetric, binary.BigEndian.Uint16(p)}]
	if o == nil || !visible(s, o) {
		return errFrame(yubihsm.CodeObjectNotFound), 0
	}
	data := p[2:]
	switch cmd {
	case CmdSignEdDSA:
		if o.ed == nil {
			return errFrame(yubihsm.CodeInvalidCommand), 0
		}
		if o.caps&CapSignEdDSA == 0 || s.auth.caps&CapSignEdDSA == 0 {
			return errFrame(yubihsm.CodeInsufficientPermissions), 0
		}
		if d.algorithmOff(o.alg) {
			return errFrame(yubihsm.CodeAlgorithmDisabled), 0
		}
		d.stats.Signs++
		return okFrame(cmd, o.ed.sign(data)), d.profile.EdDSATime(len(data))
	default:
		if o.ec == nil {
			return errFrame(yubihsm.CodeInvalidCommand), 0
		}
		if o.caps&CapSignECDSA == 0 || s.auth.caps&CapSignECDSA == 0 {
			return errFrame(yubihsm.CodeInsufficientPermissions), 0
		}
		if d.algorithmOff(o.alg) {
			return errFrame(yubihsm.CodeAlgorithmDisabled), 0
		}
		if len(data) == 0 || len(data) > 64 {
			return errFrame(yubihsm.CodeWrongLength), 0
		}
		sig, err := ecdsa.SignASN1(rand.Reader, o.ec, data)
		if err != nil {
			return errFrame(yubihsm.CodeInvalidData), 0
		}
		d.stats.Signs++
		return okFrame(cmd, sig), d.profile.ECDSAP256
	}
}

// listFilterLen is the value length of each List Objects filter tag.
var listFilterLen = [256]int{1: 2, 2: 1, 3: 2, 4: 8, 5: 1, 6: 40}

// list answers List Objects: filters are tag-value pairs (id 01, type 02,
// domains 03, capabilities 04, algorithm 05, label 06).
func (d *Device) list(s *session, p []byte) []byte {
	var (
		id, domains     uint16
		typ, alg        byte
		caps            uint64
		label           []byte
		hasID, hasLabel bool
	)
	for len(p) > 0 {
		tag, rest := p[0], p[1:]
		n := listFilterLen[tag]
		if n == 0 {
			return errFrame(yubihsm.CodeInvalidData)
		}
		if len(rest) < n {
			return errFrame(yubihsm.CodeWrongLength)
		}
		v := rest[:n]
		switch tag {
		case 1:
			id, hasID = binary.BigEndian.Uint16(v), true
		case 2:
			typ = v[0]
		case 3:
			domains = binary.BigEndian.Uint16(v)
		case 4:
			caps = binary.BigEndian.Uint64(v)
		case 5:
			alg = v[0]
		case 6:
			label, hasLabel = v, true
		}
		p = rest[n:]
	}
	var out []byte
	for _, o := range d.sortedObjects() {
		switch {
		case !visible(s, o),
			hasID && o.id != id,
			typ != 0 && o.typ != typ,
			domains != 0 && o.domains&domains == 0,
			caps != 0 && o.caps&caps != caps,
			alg != 0 && o.alg != alg,
			hasLabel && !bytes.Equal(o.label[:], label):
			continue
		}
		out = binary.BigEndian.AppendUint16(out, o.id)
		out = append(out, o.typ, o.seq)
	}
	return okFrame(CmdListObjects, out)
}

func (d *Device) sortedObjects() []*object {
	out := make([]*object, 0, len(d.objects))
	for _, o := range d.objects {
		out = append(out, o)
	}
	slices.SortFunc(out, func(a, b *object) int {
		if a.typ != b.typ {
			return int(a.typ) - int(b.typ)
		}
		return int(a.id) - int(b.id)
	})
	return out
}

// p256FromScalar makes the P-256 key with private scalar d (32 bytes,
// big-endian, in [1, n-1]).
func p256FromScalar(d []byte) (*ecdsa.PrivateKey, error) {
	return ecdsa.ParseRawPrivateKey(elliptic.P256(), d)
}
