package yubihsmsim

import (
	"bytes"
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/ecdh"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/subtle"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/big"
	"slices"
	"sync"
	"time"

	"github.com/signerkit/signerkit/internal/scp03"
	"github.com/signerkit/signerkit/internal/simtime"
	"github.com/signerkit/signerkit/signer"
)

// Command codes (protocols.md B.1).
const (
	CmdEcho             = 0x01
	CmdCreateSession    = 0x03
	CmdAuthenticate     = 0x04
	CmdSessionMessage   = 0x05
	CmdDeviceInfo       = 0x06
	CmdCloseSession     = 0x40
	CmdPutAsymmetricKey = 0x45
	CmdGenerateAsymKey  = 0x46
	CmdListObjects      = 0x48
	CmdGetObjectInfo    = 0x4e
	CmdGetPublicKey     = 0x54
	CmdSignECDSA        = 0x56
	CmdDeleteObject     = 0x58
	CmdSignEdDSA        = 0x6a
	CmdError            = 0x7f
)

// Error codes the device answers with (protocols.md B.1).
const (
	ErrInvalidCommand = 0x01
	ErrInvalidData    = 0x02
	ErrInvalidSession = 0x03
	ErrAuthFailed     = 0x04
	ErrSessionsFull   = 0x05
	ErrWrongLength    = 0x08
	ErrPermission     = 0x09
	ErrObjectNotFound = 0x0b
	ErrObjectExists   = 0x11
)

// Object types, algorithms and capabilities the simulator knows.
const (
	TypeAuthKey    = 0x02
	TypeAsymmetric = 0x03

	AlgP256    = 12
	AlgAuthAES = 38
	AlgEd25519 = 46

	CapPutAsymmetric    uint64 = 0x08
	CapGenerateAsym     uint64 = 0x10
	CapSignECDSA        uint64 = 0x80
	CapSignEdDSA        uint64 = 0x100
	CapDeleteAuthKey    uint64 = 0x0000010000000000
	CapDeleteAsymmetric uint64 = 0x0000020000000000
	CapAll              uint64 = 0x00007fffffffffff
)

// Sessions is the number of concurrent sessions the device holds.
const Sessions = 16

// IdleTimeout is how long an unused session lives (protocols.md B.5).
const IdleTimeout = 30 * time.Second

// Config configures a Device. The zero value is a YubiHSM 2 with the
// default authentication key (id 1, password "password"), the YubiHSM2
// latency profile accounted rather than slept, and the wall clock.
type Config struct {
	// Mode says whether modeled time is only reported (simtime.Accounted,
	// the zero value) or also slept (simtime.Realtime).
	Mode simtime.Mode
	// Profile is the latency model; nil means YubiHSM2.
	Profile *Profile
	// Clock drives session idle expiry; nil means the wall clock. Tests
	// pass a *simtime.Manual.
	Clock simtime.Clock
	// Rand supplies card challenges, generated keys and object ids; nil
	// means crypto/rand.
	Rand io.Reader
	// Serial is the device's serial number; 0 means 12345678.
	Serial uint32
	// NoDefaultAuthKey leaves out the factory authentication key.
	NoDefaultAuthKey bool
}

// Device is a simulated YubiHSM 2: its objects, its 16 session slots and
// their SCP03 state, executed under one lock as the real device serialises
// every operation. It is safe for concurrent use.
type Device struct {
	mode    simtime.Mode
	profile Profile
	clock   simtime.Clock
	rand    io.Reader
	serial  uint32

	mu       sync.Mutex // the device: held while a command executes
	objects  map[objKey]*object
	sessions [Sessions]*session
	stats    Stats

	fmu     sync.Mutex // faults
	faults  map[Fault]int
	hangEnd chan struct{} // closed when FaultHang is cleared
}

type objKey struct {
	typ byte
	id  uint16
}

type object struct {
	id        uint16
	typ       byte
	alg       byte
	label     [40]byte
	domains   uint16
	caps      uint64
	delegated uint64
	seq       byte
	origin    byte // 1 generated, 2 imported
	ed        ed25519.PrivateKey
	ec        *ecdsa.PrivateKey
	enc, mac  [scp03.KeyLen]byte // authentication keys
}

type session struct {
	id            byte
	auth          *object
	keys          scp03.SessionKeys
	block         cipher.Block
	host, card    []byte
	chain         [16]byte
	counter       uint32
	authenticated bool
	lastUsed      time.Time
}

// Stats counts what the device has done, for tests.
type Stats struct {
	SessionsCreated int // Create Session commands that got a slot
	SessionsClosed  int // Close Session commands
	SessionsExpired int // sessions dropped after IdleTimeout
	Echoes          int // Echo commands, plain or in a session
	Signs           int // Sign EdDSA and Sign ECDSA commands that signed
	Commands        int // every frame handled
}

// New returns a device configured by cfg.
func New(cfg Config) *Device {
	d := &Device{
		mode:    cfg.Mode,
		profile: YubiHSM2,
		clock:   cfg.Clock,
		rand:    cfg.Rand,
		serial:  cfg.Serial,
		objects: map[objKey]*object{},
		faults:  map[Fault]int{},
	}
	if cfg.Profile != nil {
		d.profile = *cfg.Profile
	}
	if d.clock == nil {
		d.clock = simtime.System
	}
	if d.rand == nil {
		d.rand = rand.Reader
	}
	if d.serial == 0 {
		d.serial = 12345678
	}
	if !cfg.NoDefaultAuthKey {
		k := defaultAuthKey()
		d.addAuthKey(1, "DEFAULT AUTHKEY CHANGE THIS ASAP", k[0], k[1], CapAll, CapAll, 0xffff)
	}
	return d
}

// defaultAuthKey is the factory key's derived pair, computed once: PBKDF2
// at 10,000 rounds costs milliseconds per device otherwise.
var defaultAuthKey = sync.OnceValue(func() [2][scp03.KeyLen]byte {
	enc, mac := scp03.AuthKey([]byte("password"))
	return [2][scp03.KeyLen]byte{enc, mac}
})

// AddAuthKey stores a password authentication key (PBKDF2 as in
// protocols.md B.3), replacing any with the same id.
func (d *Device) AddAuthKey(id uint16, label string, password []byte, caps, delegated uint64, domains uint16) {
	enc, mac := scp03.AuthKey(password)
	d.addAuthKey(id, label, enc, mac, caps, delegated, domains)
}

func (d *Device) addAuthKey(id uint16, label string, enc, mac [scp03.KeyLen]byte, caps, delegated uint64, domains uint16) {
	o := &object{id: id, typ: TypeAuthKey, alg: AlgAuthAES, caps: caps, delegated: delegated, domains: domains, origin: 2, enc: enc, mac: mac}
	copy(o.label[:], label)
	d.mu.Lock()
	d.objects[objKey{TypeAuthKey, id}] = o
	d.mu.Unlock()
}

// Serial returns the device's serial number.
func (d *Device) Serial() uint32 { return d.serial }

// Stats returns the device's counters.
func (d *Device) Stats() Stats {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.stats
}

// OpenSessions returns the number of session slots in use (sessions past
// their idle timeout included until something touches the device).
func (d *Device) OpenSessions() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	n := 0
	for _, s := range d.sessions {
		if s != nil {
			n++
		}
	}
	return n
}

// ExpireSessions drops every session at once, as if each had been idle for
// IdleTimeout.
func (d *Device) ExpireSessions() {
	d.mu.Lock()
	defer d.mu.Unlock()
	for i, s := range d.sessions {
		if s != nil {
			d.dropSession(i)
			d.stats.SessionsExpired++
		}
	}
}

// errUnplugged is what Handle returns while FaultUnplugged is set.
var errUnplugged = errors.New("yubihsmsim: device unplugged")

// Handle executes one command frame and returns the response frame, with
// the modeled stages it cost (reported, in Realtime mode, after sleeping
// them). It fails only when the device is unplugged (FaultUnplugged), hangs
// past ctx (FaultHang) or ctx ends while it sleeps; every protocol error is
// an error frame.
func (d *Device) Handle(ctx context.Context, frame []byte) ([]byte, []signer.StageInfo, error) {
	if err := d.waitHang(ctx); err != nil {
		return nil, nil, err
	}
	if d.take(FaultUnplugged) {
		return nil, nil, errUnplugged
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.stats.Commands++
	d.sweep()
	resp, cost, isSession := d.dispatch(frame)
	var stages []signer.StageInfo
	if cost > 0 {
		info := signer.StageInfo{Stage: signer.StageDevice, Duration: cost, Source: signer.Modeled, Profile: d.profile.Name}
		if d.mode == simtime.Realtime {
			if err := simtime.Sleep(ctx, cost); err != nil {
				return nil, nil, err
			}
			info.Slept = true
		}
		stages = append(stages, info)
	}
	return d.corrupt(resp, isSession), stages, nil
}

// sweep frees sessions idle for longer than IdleTimeout.
func (d *Device) sweep() {
	now := d.clock.Now()
	for i, s := range d.sessions {
		if s != nil && now.Sub(s.lastUsed) > IdleTimeout {
			d.dropSession(i)
			d.stats.SessionsExpired++
		}
	}
}

func (d *Device) dropSession(i int) {
	if s := d.sessions[i]; s != nil {
		s.keys.Wipe()
		d.sessions[i] = nil
	}
}

func errFrame(code byte) []byte { return []byte{CmdError, 0, 1, code} }

func okFrame(cmd byte, payload []byte) []byte {
	return scp03.Frame{Cmd: cmd | 0x80, Payload: payload}.Bytes()
}

// dispatch runs a plain frame; it reports the modeled device time and
// whether the response is a session message.
func (d *Device) dispatch(frame []byte) (resp []byte, cost time.Duration, isSession bool) {
	f, err := scp03.ParseFrame(frame)
	if err != nil {
		return errFrame(ErrWrongLength), 0, false
	}
	switch f.Cmd {
	case CmdEcho:
		d.stats.Echoes++
		return okFrame(CmdEcho, f.Payload), 0, false
	case CmdDeviceInfo:
		return okFrame(CmdDeviceInfo, d.deviceInfo()), 0, false
	case CmdCreateSession:
		return d.createSession(f.Payload), 0, false
	case CmdAuthenticate:
		return d.authenticate(f.Payload), 0, false
	case CmdSessionMessage:
		resp, cost := d.sessionMessage(f.Payload)
		return resp, cost, resp[0] == CmdSessionMessage|0x80
	}
	return errFrame(ErrInvalidCommand), 0, false
}

func (d *Device) deviceInfo() []byte {
	out := []byte{2, 4, 0, 0, 0, 0, 0, 62, 62}
	binary.BigEndian.PutUint32(out[3:7], d.serial)
	return append(out, AlgP256, AlgAuthAES, AlgEd25519)
}

func (d *Device) createSession(p []byte) []byte {
	if len(p) != 2+scp03.ChallengeLen {
		return errFrame(ErrWrongLength)
	}
	auth := d.objects[objKey{TypeAuthKey, binary.BigEndian.Uint16(p)}]
	if auth == nil {
		return errFrame(ErrObjectNotFound)
	}
	slot := -1
	for i, s := range d.sessions {
		if s == nil {
			slot = i
			break
		}
	}
	if slot < 0 {
		return errFrame(ErrSessionsFull)
	}
	card := make([]byte, scp03.ChallengeLen)
	if _, err := io.ReadFull(d.rand, card); err != nil {
		return errFrame(ErrInvalidData)
	}
	s := &session{id: byte(slot), auth: auth, host: append([]byte(nil), p[2:]...), card: card, lastUsed: d.clock.Now()}
	s.keys = scp03.DeriveSessionKeys(auth.enc[:], auth.mac[:], s.host, s.card)
	s.block, _ = aes.NewCipher(s.keys.ENC[:])
	d.sessions[slot] = s
	d.stats.SessionsCreated++
	out := append([]byte{s.id}, card...)
	return okFrame(CmdCreateSession, append(out, s.keys.Cryptogram(scp03.ConstCardCryptogram, s.host, s.card)...))
}

// session returns the live session with id sid, touching it.
func (d *Device) session(sid byte, authenticated bool) *session {
	if int(sid) >= Sessions {
		return nil
	}
	s := d.sessions[sid]
	if s == nil || s.authenticated != authenticated {
		return nil
	}
	s.lastUsed = d.clock.Now()
	return s
}

func (d *Device) authenticate(p []byte) []byte {
	if len(p) != 1+scp03.CryptogramLen+scp03.MACLen {
		return errFrame(ErrWrongLength)
	}
	s := d.session(p[0], false)
	if s == nil {
		return errFrame(ErrInvalidSession)
	}
	host := p[1 : 1+scp03.CryptogramLen]
	var zero [16]byte
	mac := scp03.MAC(s.keys.MAC[:], zero[:], CmdAuthenticate, s.id, host)
	want := s.keys.Cryptogram(scp03.ConstHostCryptogram, s.host, s.card)
	if subtle.ConstantTimeCompare(mac[:scp03.MACLen], p[1+scp03.CryptogramLen:]) != 1 || subtle.ConstantTimeCompare(want, host) != 1 {
		d.dropSession(int(s.id))
		return errFrame(ErrAuthFailed)
	}
	s.chain = mac
	s.counter = 1
	s.authenticated = true
	return okFrame(CmdAuthenticate, nil)
}

func (d *Device) sessionMessage(p []byte) ([]byte, time.Duration) {
	if len(p) < 1+16+scp03.MACLen || (len(p)-1-scp03.MACLen)%16 != 0 {
		return errFrame(ErrWrongLength), 0
	}
	s := d.session(p[0], true)
	if s == nil {
		return errFrame(ErrInvalidSession), 0
	}
	ct := p[1 : len(p)-scp03.MACLen]
	cmac := scp03.MAC(s.keys.MAC[:], s.chain[:], CmdSessionMessage, s.id, ct)
	if subtle.ConstantTimeCompare(cmac[:scp03.MACLen], p[len(p)-scp03.MACLen:]) != 1 {
		return errFrame(ErrAuthFailed), 0
	}
	s.chain = cmac
	iv := scp03.IV(s.block, s.counter)
	var inner []byte
	var cost time.Duration
	closing := false
	pt, _ := scp03.Decrypt(s.block, iv, ct) // whole blocks: checked above
	if plain, err := scp03.Unpad(pt); err != nil {
		inner = errFrame(ErrInvalidData)
	} else if f, err := scp03.ParseFrame(plain); err != nil {
		inner = errFrame(ErrWrongLength)
	} else {
		inner, cost = d.inner(s, f)
		closing = f.Cmd == CmdCloseSession && inner[0] != CmdError
	}
	rct := scp03.Encrypt(s.block, iv, scp03.Pad(inner))
	rmac := scp03.MAC(s.keys.RMAC[:], s.chain[:], CmdSessionMessage|0x80, s.id, rct)
	s.counter++
	body := append(append([]byte{s.id}, rct...), rmac[:scp03.MACLen]...)
	if closing {
		d.dropSession(int(s.id))
		d.stats.SessionsClosed++
	}
	return okFrame(CmdSessionMessage, body), cost
}

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
		return okFrame(CmdDeviceInfo, d.deviceInfo()), 0
	case CmdCloseSession:
		if len(p) != 0 {
			return errFrame(ErrWrongLength), 0
		}
		return okFrame(CmdCloseSession, nil), 0
	case CmdPutAsymmetricKey, CmdGenerateAsymKey:
		return d.storeKey(s, f.Cmd, p), 0
	case CmdGetPublicKey:
		if len(p) != 2 && len(p) != 3 {
			return errFrame(ErrWrongLength), 0
		}
		o := d.objects[objKey{TypeAsymmetric, binary.BigEndian.Uint16(p)}]
		if o == nil || !visible(s, o) {
			return errFrame(ErrObjectNotFound), 0
		}
		return okFrame(CmdGetPublicKey, append([]byte{o.alg}, publicBytes(o)...)), 0
	case CmdSignEdDSA, CmdSignECDSA:
		return d.sign(s, f.Cmd, p)
	case CmdListObjects:
		return d.list(s, p), 0
	case CmdGetObjectInfo:
		if len(p) != 3 {
			return errFrame(ErrWrongLength), 0
		}
		o := d.objects[objKey{p[2], binary.BigEndian.Uint16(p)}]
		if o == nil || !visible(s, o) {
			return errFrame(ErrObjectNotFound), 0
		}
		return okFrame(CmdGetObjectInfo, objectInfo(o)), 0
	case CmdDeleteObject:
		if len(p) != 3 {
			return errFrame(ErrWrongLength), 0
		}
		k := objKey{p[2], binary.BigEndian.Uint16(p)}
		o := d.objects[k]
		if o == nil || !visible(s, o) {
			return errFrame(ErrObjectNotFound), 0
		}
		need := CapDeleteAsymmetric
		if o.typ == TypeAuthKey {
			need = CapDeleteAuthKey
		}
		if s.auth.caps&need == 0 {
			return errFrame(ErrPermission), 0
		}
		delete(d.objects, k)
		return okFrame(CmdDeleteObject, nil), 0
	}
	return errFrame(ErrInvalidCommand), 0
}

func publicBytes(o *object) []byte {
	if o.ed != nil {
		return append([]byte(nil), o.ed.Public().(ed25519.PublicKey)...)
	}
	out := make([]byte, 64) // X ‖ Y, no 04 prefix
	o.ec.X.FillBytes(out[:32])
	o.ec.Y.FillBytes(out[32:])
	return out
}

func objectInfo(o *object) []byte {
	out := make([]byte, 0, 66)
	out = binary.BigEndian.AppendUint64(out, o.caps)
	out = binary.BigEndian.AppendUint16(out, o.id)
	size := uint16(len(publicBytes0(o)))
	out = binary.BigEndian.AppendUint16(out, size)
	out = binary.BigEndian.AppendUint16(out, o.domains)
	out = append(out, o.typ, o.alg, o.seq, o.origin)
	out = append(out, o.label[:]...)
	return binary.BigEndian.AppendUint64(out, o.delegated)
}

// publicBytes0 is the stored size of an object's key material.
func publicBytes0(o *object) []byte {
	switch {
	case o.ed != nil:
		return o.ed.Seed()
	case o.ec != nil:
		return make([]byte, 32)
	}
	return make([]byte, 2*scp03.KeyLen)
}

func (d *Device) storeKey(s *session, cmd byte, p []byte) []byte {
	const hdr = 2 + 40 + 2 + 8 + 1
	if len(p) < hdr {
		return errFrame(ErrWrongLength)
	}
	need := CapGenerateAsym
	if cmd == CmdPutAsymmetricKey {
		need = CapPutAsymmetric
	}
	if s.auth.caps&need == 0 {
		return errFrame(ErrPermission)
	}
	o := &object{typ: TypeAsymmetric, id: binary.BigEndian.Uint16(p), origin: 1}
	copy(o.label[:], p[2:42])
	o.domains = binary.BigEndian.Uint16(p[42:44])
	o.caps = binary.BigEndian.Uint64(p[44:52])
	o.alg = p[52]
	key := p[hdr:]
	if o.domains == 0 || o.domains&^s.auth.domains != 0 || o.caps&^s.auth.delegated != 0 {
		return errFrame(ErrPermission)
	}
	if cmd == CmdGenerateAsymKey && len(key) != 0 {
		return errFrame(ErrWrongLength)
	}
	var err error
	switch o.alg {
	case AlgEd25519:
		if cmd == CmdPutAsymmetricKey {
			if len(key) != ed25519.SeedSize {
				return errFrame(ErrWrongLength)
			}
			o.ed = ed25519.NewKeyFromSeed(key)
		} else {
			_, o.ed, err = ed25519.GenerateKey(d.rand)
		}
	case AlgP256:
		if cmd == CmdPutAsymmetricKey {
			if len(key) != 32 {
				return errFrame(ErrWrongLength)
			}
			o.ec, err = p256FromScalar(key)
		} else {
			o.ec, err = ecdsa.GenerateKey(elliptic.P256(), d.rand)
		}
	default:
		return errFrame(ErrInvalidData)
	}
	if err != nil {
		return errFrame(ErrInvalidData)
	}
	if cmd == CmdPutAsymmetricKey {
		o.origin = 2
	}
	if o.id == 0 {
		if o.id = d.freeID(); o.id == 0 {
			return errFrame(ErrInvalidData)
		}
	}
	if d.objects[objKey{TypeAsymmetric, o.id}] != nil {
		return errFrame(ErrObjectExists)
	}
	d.objects[objKey{TypeAsymmetric, o.id}] = o
	return okFrame(cmd, binary.BigEndian.AppendUint16(nil, o.id))
}

// freeID picks a random free object id, as the device does when asked for
// id 0, so that clients cannot rely on small ids.
func (d *Device) freeID() uint16 {
	var b [2]byte
	for range 64 {
		if _, err := io.ReadFull(d.rand, b[:]); err != nil {
			break
		}
		id := binary.BigEndian.Uint16(b[:])
		if id != 0 && id != 0xffff && d.objects[objKey{TypeAsymmetric, id}] == nil {
			return id
		}
	}
	for id := uint16(1); id < 0xffff; id++ {
		if d.objects[objKey{TypeAsymmetric, id}] == nil {
			return id
		}
	}
	return 0
}

func (d *Device) sign(s *session, cmd byte, p []byte) ([]byte, time.Duration) {
	if len(p) < 2 {
		return errFrame(ErrWrongLength), 0
	}
	o := d.objects[objKey{TypeAsymmetric, binary.BigEndian.Uint16(p)}]
	if o == nil || !visible(s, o) {
		return errFrame(ErrObjectNotFound), 0
	}
	data := p[2:]
	switch cmd {
	case CmdSignEdDSA:
		if o.ed == nil {
			return errFrame(ErrInvalidCommand), 0
		}
		if o.caps&CapSignEdDSA == 0 || s.auth.caps&CapSignEdDSA == 0 {
			return errFrame(ErrPermission), 0
		}
		d.stats.Signs++
		return okFrame(cmd, ed25519.Sign(o.ed, data)), d.profile.EdDSATime(len(data))
	default:
		if o.ec == nil {
			return errFrame(ErrInvalidCommand), 0
		}
		if o.caps&CapSignECDSA == 0 || s.auth.caps&CapSignECDSA == 0 {
			return errFrame(ErrPermission), 0
		}
		if len(data) == 0 || len(data) > 64 {
			return errFrame(ErrWrongLength), 0
		}
		sig, err := ecdsa.SignASN1(rand.Reader, o.ec, data)
		if err != nil {
			return errFrame(ErrInvalidData), 0
		}
		d.stats.Signs++
		return okFrame(cmd, sig), d.profile.ECDSAP256
	}
}

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
		n := map[byte]int{1: 2, 2: 1, 3: 2, 4: 8, 5: 1, 6: 40}[tag]
		if n == 0 {
			return errFrame(ErrInvalidData)
		}
		if len(rest) < n {
			return errFrame(ErrWrongLength)
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
	k, err := ecdh.P256().NewPrivateKey(d)
	if err != nil {
		return nil, err
	}
	pt := k.PublicKey().Bytes()
	return &ecdsa.PrivateKey{
		PublicKey: ecdsa.PublicKey{Curve: elliptic.P256(), X: new(big.Int).SetBytes(pt[1:33]), Y: new(big.Int).SetBytes(pt[33:])},
		D:         new(big.Int).SetBytes(d),
	}, nil
}

// String describes the device for messages.
func (d *Device) String() string { return fmt.Sprintf("yubihsmsim serial %d", d.serial) }
