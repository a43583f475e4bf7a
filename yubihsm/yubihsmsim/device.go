package yubihsmsim

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/ecdsa"
	"crypto/rand"
	"crypto/subtle"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/signerkit/signerkit/internal/scp03"
	"github.com/signerkit/signerkit/internal/simtime"
	"github.com/signerkit/signerkit/signer/signertrace"
	"github.com/signerkit/signerkit/yubihsm"
)

// Command codes (docs/protocols.md B.1).
const (
	CmdEcho             = 0x01
	CmdCreateSession    = 0x03
	CmdAuthenticate     = 0x04
	CmdSessionMessage   = 0x05
	CmdDeviceInfo       = 0x06
	CmdCloseSession     = 0x40
	CmdGetStorageInfo   = 0x41
	CmdPutOpaque        = 0x42
	CmdGetOpaque        = 0x43
	CmdPutAuthKey       = 0x44
	CmdPutAsymmetricKey = 0x45
	CmdGenerateAsymKey  = 0x46
	CmdListObjects      = 0x48
	CmdGetObjectInfo    = 0x4e
	CmdSetOption        = 0x4f
	CmdGetOption        = 0x50
	CmdGetPublicKey     = 0x54
	CmdSignECDSA        = 0x56
	CmdGetPseudoRandom  = 0x51
	CmdDeleteObject     = 0x58
	CmdSignEdDSA        = 0x6a
	CmdBlinkDevice      = 0x6b
	CmdChangeAuthKey    = 0x6c
	CmdError            = 0x7f
)

// Object types, algorithms and capabilities the simulator knows.
const (
	TypeOpaque     = 0x01
	TypeAuthKey    = 0x02
	TypeAsymmetric = 0x03

	AlgP256       = 12
	AlgOpaqueData = 30
	AlgOpaqueX509 = 31
	AlgAuthAES    = 38
	AlgEd25519    = 46

	CapGetOpaque        uint64 = 0x01
	CapPutOpaque        uint64 = 0x02
	CapPutAuthKey       uint64 = 0x04
	CapPutAsymmetric    uint64 = 0x08
	CapGenerateAsym     uint64 = 0x10
	CapSignECDSA        uint64 = 0x80
	CapSignEdDSA        uint64 = 0x100
	CapGetPseudoRandom  uint64 = 1 << 0x13
	CapDeleteOpaque     uint64 = 1 << 0x27
	CapDeleteAuthKey    uint64 = 0x0000010000000000
	CapDeleteAsymmetric uint64 = 0x0000020000000000
	CapChangeAuthKey    uint64 = 1 << 0x2e
	CapAll              uint64 = 0x00007fffffffffff
)

// Sessions is the number of concurrent sessions the device holds.
const Sessions = 16

// IdleTimeout is how long an unused session lives (docs/protocols.md B.5).
const IdleTimeout = 30 * time.Second

// Config configures a Device. The zero value is a YubiHSM 2 with the
// default authentication key (id 1, password "password"), the YubiHSM2
// latency profile accounted rather than slept (unless SIGNERKIT_SIM says
// realtime), and the wall clock.
type Config struct {
	// Time is what the device does with modeled time; zero (TimeFromEnv)
	// means accounted unless SIGNERKIT_SIM=realtime.
	Time TimeMode
	// Profile is the latency model; nil means YubiHSM2.
	Profile *Profile
	// Clock drives session idle expiry; nil means the wall clock. Tests
	// pass a clock they move on themselves.
	Clock Clock
	// Rand supplies card challenges, generated keys and object ids; nil
	// means crypto/rand.
	Rand io.Reader
	// Serial is the device's serial number; 0 means 12345678.
	Serial uint32
	// NoDefaultAuthKey leaves out the factory authentication key.
	NoDefaultAuthKey bool
}

// TimeMode says whether a device sleeps its modeled time.
type TimeMode uint8

// The time modes.
const (
	// TimeFromEnv is Realtime when SIGNERKIT_SIM=realtime, else Accounted.
	TimeFromEnv TimeMode = iota
	// Accounted reports modeled time on the caller's trace (through the
	// connector's response header) and answers at once.
	Accounted
	// Realtime also sleeps it, holding the device as a busy device would,
	// within the request's context.
	Realtime
)

// simMode resolves a TimeMode.
func (m TimeMode) simMode() simtime.Mode {
	switch m {
	case Accounted:
		return simtime.Accounted
	case Realtime:
		return simtime.Realtime
	}
	return simtime.ModeFromEnv()
}

// Clock is the time source of the device's session idle expiry. Tests
// pass one they move on themselves, to expire sessions without waiting
// 30 s.
type Clock interface {
	// Now returns the current time.
	Now() time.Time
}

// Device is a simulated YubiHSM 2: its objects, its 16 session slots and
// their SCP03 state, executed under one lock as the real device serialises
// every operation. It is safe for concurrent use.
type Device struct {
	mode    simtime.Mode
	profile Profile
	clock   Clock
	rand    io.Reader
	serial  uint32

	mu       sync.Mutex // the device: held while a command executes
	objects  map[objKey]*object
	sessions [Sessions]*session
	stats    Stats
	opts     options
	log      auditLog

	fmu     sync.Mutex // faults; taken after mu, never the other way round
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
	ed        *edKey
	ec        *ecdsa.PrivateKey
	enc, mac  [scp03.KeyLen]byte // authentication keys
	data      []byte             // opaque objects
	wrap      []byte             // wrap keys: the AES key
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
	// SessionsCreated counts Create Session commands that got a slot.
	SessionsCreated int
	// SessionsClosed counts Close Session commands.
	SessionsClosed int
	// SessionsExpired counts sessions dropped after IdleTimeout, or by
	// ExpireSessions.
	SessionsExpired int
	// Echoes counts Echo commands, plain or in a session.
	Echoes int
	// Signs counts Sign EdDSA and Sign ECDSA commands that signed.
	Signs int
	// Blinks counts Blink Device commands accepted.
	Blinks int
	// Commands counts every frame handled.
	Commands int
	// Hung counts frames that arrived while the device hung (Hang).
	Hung int
}

// New returns a device configured by cfg.
func New(cfg Config) *Device {
	d := &Device{
		mode:    cfg.Time.simMode(),
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
	d.resetLog()
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
// docs/protocols.md B.3), replacing any with the same id.
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

// Time returns whether the device sleeps its modeled time: Accounted or
// Realtime.
func (d *Device) Time() TimeMode {
	if d.mode == simtime.Realtime {
		return Realtime
	}
	return Accounted
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

// deadlineError is what Handle returns in accounted mode when a command's
// modeled time would run past ctx's deadline.
type deadlineError struct {
	modeled, accounted time.Duration
}

func (e *deadlineError) Error() string {
	return fmt.Sprintf("yubihsmsim: %v of modeled device time, %v of it before the deadline: %v", e.modeled, e.accounted, context.DeadlineExceeded)
}

func (e *deadlineError) Unwrap() error { return context.DeadlineExceeded }

// modeledDeadlineKey is the context key of the deadline the connector
// face read from a simulator client's request (see timeLeftHeader).
type modeledDeadlineKey struct{}

// modeledDeadline returns the deadline that bounds modeled time under
// ctx: the one a client sent through the connector, else ctx's own.
func modeledDeadline(ctx context.Context) (time.Time, bool) {
	if t, ok := ctx.Value(modeledDeadlineKey{}).(time.Time); ok {
		return t, true
	}
	return ctx.Deadline()
}

// Handle executes one command frame and returns the response frame, with
// the modeled stages it cost (reported, in Realtime mode, after sleeping
// them). It fails only when the device is unplugged (FaultUnplugged), hangs
// past ctx (FaultHang), ctx ends while it sleeps, or, in Accounted mode,
// the command's modeled time would run past ctx's deadline: then the
// device has executed the command (its session has moved on, as a real
// device's has when the host gives up waiting), and Handle returns the
// stage accounted up to the deadline with an error wrapping
// context.DeadlineExceeded instead of the response. Every protocol error
// is an error frame.
func (d *Device) Handle(ctx context.Context, frame []byte) ([]byte, []signertrace.StageInfo, error) {
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
	var stages []signertrace.StageInfo
	if cost > 0 {
		info := signertrace.StageInfo{Stage: signertrace.StageDevice, Duration: cost, Source: signertrace.Modeled, Profile: d.profile.Name}
		if d.mode == simtime.Realtime {
			if err := simtime.Sleep(ctx, cost); err != nil {
				return nil, nil, err
			}
			info.Slept = true
		} else if deadline, ok := modeledDeadline(ctx); ok {
			if left := time.Until(deadline); cost > left {
				info.Duration = max(left, 0)
				if info.Duration > 0 {
					stages = append(stages, info)
				}
				return nil, stages, &deadlineError{modeled: cost, accounted: info.Duration}
			}
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

func errFrame(code yubihsm.ErrorCode) []byte { return []byte{CmdError, 0, 1, byte(code)} }

func okFrame(cmd byte, payload []byte) []byte {
	return scp03.Frame{Cmd: cmd | 0x80, Payload: payload}.Bytes()
}

// dispatch runs a plain frame; it reports the modeled device time and
// whether the response is a session message.
func (d *Device) dispatch(frame []byte) (resp []byte, cost time.Duration, isSession bool) {
	f, err := scp03.ParseFrame(frame)
	if err != nil {
		return errFrame(yubihsm.CodeWrongLength), 0, false
	}
	switch f.Cmd {
	case CmdEcho:
		d.stats.Echoes++
		return okFrame(CmdEcho, f.Payload), 0, false
	case CmdDeviceInfo:
		return d.deviceInfo(f.Payload), 0, false
	case CmdCreateSession:
		resp := d.createSession(f.Payload)
		if len(f.Payload) >= 2 {
			d.logCommand(f.Cmd, len(f.Payload), noKey, binary.BigEndian.Uint16(f.Payload), resp)
		}
		return resp, 0, false
	case CmdAuthenticate:
		auth := uint16(noKey)
		if len(f.Payload) > 0 && int(f.Payload[0]) < Sessions && d.sessions[f.Payload[0]] != nil {
			auth = d.sessions[f.Payload[0]].auth.id
		}
		resp := d.authenticate(f.Payload)
		d.logCommand(f.Cmd, len(f.Payload), noKey, auth, resp)
		return resp, 0, false
	case CmdSessionMessage:
		resp, cost := d.sessionMessage(f.Payload)
		return resp, cost, resp[0] == CmdSessionMessage|0x80
	}
	return errFrame(yubihsm.CodeInvalidCommand), 0, false
}

// PartNumber is what the simulator answers on Device Info page 1, where
// firmware 2.4.0 and later put the chip designator: 12 ASCII bytes, no
// terminator (libyubihsm's yh_util_get_partnumber takes the page's bytes as
// the string and refuses fewer than 12). It names the simulator rather
// than any real part.
const PartNumber = "SIMULATED-YH"

// deviceInfo answers Device Info, plain or in a session. Firmware 2.4.0
// pages it: no data or page 0 is the version, serial, log counters and
// algorithms; page 1 (one byte, 1) is the part number. Other pages get
// INVALID DATA and more than one byte of data WRONG LENGTH; Yubico's SDK
// does not say what the device answers there, so these are the sim's
// choice.
func (d *Device) deviceInfo(p []byte) []byte {
	if len(p) > 1 {
		return errFrame(yubihsm.CodeWrongLength)
	}
	if len(p) == 1 {
		switch p[0] {
		case 0:
		case 1:
			return okFrame(CmdDeviceInfo, []byte(PartNumber))
		default:
			return errFrame(yubihsm.CodeInvalidData)
		}
	}
	out := []byte{2, 4, 0, 0, 0, 0, 0, LogSize, byte(len(d.log.entries))}
	binary.BigEndian.PutUint32(out[3:7], d.serial)
	return okFrame(CmdDeviceInfo, append(out, algorithms...))
}

func (d *Device) createSession(p []byte) []byte {
	if len(p) != 2+scp03.ChallengeLen {
		return errFrame(yubihsm.CodeWrongLength)
	}
	auth := d.objects[objKey{TypeAuthKey, binary.BigEndian.Uint16(p)}]
	if auth == nil {
		return errFrame(yubihsm.CodeObjectNotFound)
	}
	slot := -1
	for i, s := range d.sessions {
		if s == nil {
			slot = i
			break
		}
	}
	if slot < 0 {
		return errFrame(yubihsm.CodeSessionsFull)
	}
	card := make([]byte, scp03.ChallengeLen)
	if _, err := io.ReadFull(d.rand, card); err != nil {
		return errFrame(yubihsm.CodeInvalidData)
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
		return errFrame(yubihsm.CodeWrongLength)
	}
	s := d.session(p[0], false)
	if s == nil {
		return errFrame(yubihsm.CodeInvalidSession)
	}
	host := p[1 : 1+scp03.CryptogramLen]
	var zero [16]byte
	mac := scp03.MAC(s.keys.MAC[:], zero[:], CmdAuthenticate, s.id, host)
	want := s.keys.Cryptogram(scp03.ConstHostCryptogram, s.host, s.card)
	if subtle.ConstantTimeCompare(mac[:scp03.MACLen], p[1+scp03.CryptogramLen:]) != 1 || subtle.ConstantTimeCompare(want, host) != 1 {
		d.dropSession(int(s.id))
		return errFrame(yubihsm.CodeAuthenticationFailed)
	}
	s.chain = mac
	s.counter = 1
	s.authenticated = true
	return okFrame(CmdAuthenticate, nil)
}

func (d *Device) sessionMessage(p []byte) ([]byte, time.Duration) {
	if len(p) < 1+16+scp03.MACLen || (len(p)-1-scp03.MACLen)%16 != 0 {
		return errFrame(yubihsm.CodeWrongLength), 0
	}
	s := d.session(p[0], true)
	if s == nil {
		return errFrame(yubihsm.CodeInvalidSession), 0
	}
	ct := p[1 : len(p)-scp03.MACLen]
	cmac := scp03.MAC(s.keys.MAC[:], s.chain[:], CmdSessionMessage, s.id, ct)
	if subtle.ConstantTimeCompare(cmac[:scp03.MACLen], p[len(p)-scp03.MACLen:]) != 1 {
		return errFrame(yubihsm.CodeAuthenticationFailed), 0
	}
	s.chain = cmac
	iv := scp03.IV(s.block, s.counter)
	var inner []byte
	var cost time.Duration
	closing := false
	pt, _ := scp03.Decrypt(s.block, iv, ct) // whole blocks: checked above
	if plain, err := scp03.Unpad(pt); err != nil {
		inner = errFrame(yubihsm.CodeInvalidData)
	} else if f, err := scp03.ParseFrame(plain); err != nil {
		inner = errFrame(yubihsm.CodeWrongLength)
	} else if d.refusedByLog(f.Cmd) {
		// Force audit, and no room for the entry: the command does not
		// run (python-yubihsm test_forced_log expects LOG FULL).
		inner = errFrame(yubihsm.CodeLogFull)
	} else {
		inner, cost = d.inner(s, f)
		closing = f.Cmd == CmdCloseSession && inner[0] != CmdError
		d.logCommand(f.Cmd, len(f.Payload), s.auth.id, logTarget(f.Cmd, f.Payload, inner), inner)
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
