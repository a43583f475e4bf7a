package ledgersim

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"sync"
	"time"

	"github.com/signerkit/signerkit/internal/simtime"
	"github.com/signerkit/signerkit/ledger"
	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/signer/signertrace"
)

// Confirm is what the simulated user does when the app asks to confirm its
// first sign.
type Confirm uint8

const (
	// Accept presses Accept (after Config.ConfirmDelay).
	Accept Confirm = iota
	// Reject presses Reject: SW 0x6986, and the app asks again next time.
	Reject
)

// Config sets up a simulated device. The zero value is a Nano S Plus
// running the validator app 0.9.1 with a random key, a one-byte length
// prefix required, the first sign confirmed at once, and time accounted
// or slept as SIGNERKIT_SIM says.
type Config struct {
	// Seed is the Ed25519 seed of the app's key (32 bytes); nil means a
	// random one. A simulator cannot derive a real device's key.
	Seed []byte
	// Version is the GET_VERSION reply; zero means 0.9.1 (upstream).
	Version ledger.Version
	// Raw makes the device a generic Ed25519 signer that signs any bytes,
	// with no parser and no double-sign rules. It is NOT the validator
	// app: it exists so payload sweeps can show what chunking costs.
	Raw bool
	// LongPrefix accepts sign bytes with a length prefix of more than one
	// byte (129 bytes and up), which the upstream app refuses with parse
	// error 7 (docs/protocols.md A.5); whether gnoverse's fork does is unknown.
	LongPrefix bool
	// Confirm and ConfirmDelay say how the user answers the first sign
	// after the app starts; the delay is modeled time (StageConfirm).
	Confirm      Confirm
	ConfirmDelay time.Duration
	// Profile is the latency profile; zero means NanoSPlus.
	Profile Profile
	// Time is what the device does with modeled time; zero
	// (TimeFromEnv) means accounted unless SIGNERKIT_SIM=realtime.
	Time TimeMode
	// PresentKey, when set, is what PUBLIC_KEY_ED25519 answers instead of
	// the public key of Seed, as a malicious or broken device might: the
	// identity point (SmallOrderKey), say, under which one constant
	// signature verifies for every message. Signatures still come from
	// Seed. It must be 32 bytes.
	PresentKey []byte
}

// SmallOrderKey is the encoding of the Ed25519 identity point, a key of
// small order, for Config.PresentKey.
var SmallOrderKey = []byte{1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}

// TimeMode says whether a device sleeps its modeled time.
type TimeMode uint8

// The time modes.
const (
	// TimeFromEnv is Realtime when SIGNERKIT_SIM=realtime, else Accounted.
	TimeFromEnv TimeMode = iota
	// Accounted reports modeled time on the caller's trace and returns at
	// once.
	Accounted
	// Realtime also sleeps it, within the caller's context.
	Realtime
)

// Device is a simulated Ledger running the Tendermint validator app
// (docs/protocols.md A.3–A.6). It is safe for concurrent use; like the real
// device it handles one APDU at a time. Reach it through its faces:
// Transport (APDUs), OpenHID (64-byte HID reports) and ServeSpeculos (TCP).
type Device struct {
	cfg     Config
	profile Profile
	mode    simtime.Mode
	key     ed25519.PrivateKey

	mu        sync.Mutex // the device's single thread
	locked    bool
	appClosed bool
	state     fsm
	buf       []byte
	// bufLive is false from the app's start and after an overflow until
	// the next P1 == 1: the app then appends to a zero-size fallback
	// buffer (buffering.c), so any data is refused with 0x6983.
	bufLive   bool
	gone      chan struct{} // closed while unplugged
	plugged   bool
	hang      chan struct{} // non-nil while hung; closed on release
	faults    []Fault
	ports     map[*HIDPort]struct{}
	lastReply []byte
	stats     Stats
}

// Stats counts what the device did.
type Stats struct {
	APDUs, Signatures, Refused, Confirmations int
}

// New returns a device with the app open and the device unlocked.
func New(cfg Config) (*Device, error) {
	seed := cfg.Seed
	if seed == nil {
		seed = make([]byte, ed25519.SeedSize)
		if _, err := rand.Read(seed); err != nil {
			return nil, err
		}
	}
	if len(seed) != ed25519.SeedSize {
		return nil, fmt.Errorf("ledgersim: %d-byte seed, want %d: %w", len(seed), ed25519.SeedSize, signer.ErrInvalidKey)
	}
	if cfg.PresentKey != nil {
		if len(cfg.PresentKey) != ed25519.PublicKeySize {
			return nil, fmt.Errorf("ledgersim: %d-byte PresentKey, want %d: %w", len(cfg.PresentKey), ed25519.PublicKeySize, signer.ErrInvalidArgument)
		}
		cfg.PresentKey = append([]byte(nil), cfg.PresentKey...)
	}
	p := cfg.Profile
	if p == (Profile{}) {
		p = NanoSPlus
	}
	if cfg.Version == (ledger.Version{}) {
		cfg.Version = ledger.Version{Major: 0, Minor: 9, Patch: 1}
	}
	mode := cfg.Time.simMode()
	return &Device{cfg: cfg, profile: p, mode: mode, key: ed25519.NewKeyFromSeed(seed),
		gone: make(chan struct{}), plugged: true, ports: map[*HIDPort]struct{}{}}, nil
}

// MustNew is New for tests: it panics on error.
func MustNew(cfg Config) *Device {
	d, err := New(cfg)
	if err != nil {
		panic(err)
	}
	return d
}

// PublicKey returns the public key of the app's key (of Config.Seed,
// whatever Config.PresentKey makes the app report).
func (d *Device) PublicKey() ed25519.PublicKey { return d.key.Public().(ed25519.PublicKey) }

// Profile returns the device's latency profile.
func (d *Device) Profile() Profile { return d.profile }

// Time returns whether the device sleeps its modeled time: Accounted or
// Realtime.
func (d *Device) Time() TimeMode {
	if d.mode == simtime.Realtime {
		return Realtime
	}
	return Accounted
}

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

// Stats returns the device's counters.
func (d *Device) Stats() Stats {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.stats
}

// SetLocked locks or unlocks the device: while locked every APDU gets SW
// 0x5515.
func (d *Device) SetLocked(locked bool) {
	d.mu.Lock()
	d.locked = locked
	d.mu.Unlock()
}

// CloseApp returns to the dashboard: APDUs get SW 0x6E00 until OpenApp.
func (d *Device) CloseApp() {
	d.mu.Lock()
	d.appClosed = true
	d.restartLocked()
	d.mu.Unlock()
}

// OpenApp starts the app, with fresh double-sign state: the next sign
// needs confirming again.
func (d *Device) OpenApp() {
	d.mu.Lock()
	d.appClosed = false
	d.restartLocked()
	d.mu.Unlock()
}

func (d *Device) restartLocked() {
	d.state = fsm{}
	d.buf = d.buf[:0]
	d.bufLive = false
}

// SetConfirm changes how the user answers the next confirmation.
func (d *Device) SetConfirm(c Confirm, delay time.Duration) {
	d.mu.Lock()
	d.cfg.Confirm, d.cfg.ConfirmDelay = c, delay
	d.mu.Unlock()
}

// Hang makes the device stop answering: APDUs it receives are lost until
// release is called.
func (d *Device) Hang() (release func()) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.hang == nil {
		d.hang = make(chan struct{})
	}
	h := d.hang
	return func() {
		d.mu.Lock()
		defer d.mu.Unlock()
		if d.hang == h {
			close(h)
			d.hang = nil
		}
	}
}

// Unplug disconnects the device: open HID ports and APDU transports fail
// with signer.ErrDisconnected, new ones with signer.ErrDeviceNotFound,
// until Replug.
func (d *Device) Unplug() {
	d.mu.Lock()
	d.unplugLocked()
	d.mu.Unlock()
}

func (d *Device) unplugLocked() {
	if d.plugged {
		d.plugged = false
		close(d.gone)
	}
}

// Replug connects the device again. It powers up with the app open and
// unlocked (a real one asks for its PIN first) and fresh double-sign
// state, so the next sign needs confirming.
func (d *Device) Replug() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.plugged {
		d.plugged = true
		d.gone = make(chan struct{})
		d.appClosed, d.locked = false, false
		d.restartLocked()
	}
}

// costs is the modeled time one APDU took on the device.
type costs struct {
	confirm, device time.Duration
}

// process runs one APDU through the app and returns the response (data
// and status word). The caller holds d.mu.
func (d *Device) process(apdu []byte) ([]byte, costs) {
	d.stats.APDUs++
	switch {
	case len(apdu) == 0:
		return sw(ledger.SWEmptyBuffer), costs{}
	case d.locked:
		return sw(ledger.SWDeviceLocked), costs{}
	case d.appClosed:
		return sw(ledger.SWCLANotSupported), costs{} // the dashboard
	case apdu[0] != ledger.CLA: // checked before the length (app_main.c)
		return sw(ledger.SWCLANotSupported), costs{}
	case len(apdu) < 5:
		return sw(ledger.SWWrongLength), costs{}
	}
	switch apdu[1] {
	case ledger.INSGetVersion:
		mode := byte(0)
		if d.cfg.Version.Testing {
			mode = 0xFF
		}
		v := d.cfg.Version
		return append([]byte{mode, v.Major, v.Minor, v.Patch}, 0x90, 0x00), costs{}
	case ledger.INSPublicKey:
		pub := []byte(d.PublicKey())
		if d.cfg.PresentKey != nil {
			pub = d.cfg.PresentKey
		}
		return append(append([]byte(nil), pub...), 0x90, 0x00), costs{}
	case ledger.INSSignEd25519:
		return d.sign(apdu)
	}
	return sw(ledger.SWINSNotSupported), costs{}
}

// receiveLocked is what the device does with an APDU one of its faces has
// received: the next armed fault applies first (FaultUnplug unplugs the
// device, FaultHang loses the APDU), then a hung device loses it too;
// otherwise the app processes it. ok is false when no reply will come. The
// caller holds d.mu.
func (d *Device) receiveLocked(apdu []byte) (resp []byte, c costs, f Fault, ok bool) {
	f = d.nextFault()
	switch {
	case f == FaultUnplug:
		d.unplugLocked()
		return nil, costs{}, f, false
	case f == FaultHang || d.hang != nil:
		return nil, costs{}, f, false
	}
	resp, c = d.process(apdu)
	d.lastReply = resp
	return resp, c, f, true
}

// sign is SIGN_ED25519 (app_main.c:119-138, 181-217): P1 == 1 resets the
// buffer, the data (rx-5 bytes; Lc is not checked) is appended, and the
// last packet (P1 == P2) is parsed and signed. Until the first P1 == 1
// since the app started, and after an overflow until the next one, the
// app appends to a zero-size fallback buffer (docs/protocols.md A.5 step
// 3): any data gets 0x6983, and an empty chunk leaves the buffer empty.
func (d *Device) sign(apdu []byte) ([]byte, costs) {
	p1, p2, data := apdu[2], apdu[3], apdu[5:]
	if p1 == 1 {
		d.buf = d.buf[:0]
		d.bufLive = true
	}
	if len(data) > 0 && (!d.bufLive || len(d.buf)+len(data) > d.profile.BufferSize) {
		d.buf = d.buf[:0]
		d.bufLive = false
		return sw(ledger.SWOutputBufferTooSmall), costs{}
	}
	d.buf = append(d.buf, data...)
	if p1 != p2 {
		return sw(ledger.SWOK), costs{}
	}
	msg := d.buf
	var c costs
	if !d.cfg.Raw {
		v, perr := ParseSignBytes(msg, !d.cfg.LongPrefix)
		if perr != 0 {
			d.stats.Refused++
			return []byte{byte(perr), 0x69, 0x84}, c
		}
		if !d.state.initialized {
			d.stats.Confirmations++
			c.confirm = d.cfg.ConfirmDelay
			if d.cfg.Confirm == Reject {
				d.stats.Refused++
				return sw(ledger.SWCommandNotAllowed), c
			}
			d.state = fsm{initialized: true, last: v}
		} else if !d.state.accepts(v) {
			d.stats.Refused++
			return sw(ledger.SWConditionsNotSatisfied), c
		} else {
			d.state.last = v
		}
	}
	d.stats.Signatures++
	c.device = d.profile.Sign
	return append(ed25519.Sign(d.key, msg), 0x90, 0x00), c
}

func sw(w uint16) []byte { return binary.BigEndian.AppendUint16(nil, w) }

// spend reports (and in realtime mode sleeps) the modeled time of one
// APDU exchange that moved req and resp over USB HID, to ctx's trace. A
// sleep also ends when closed is closed (the face was closed under it).
func (d *Device) spend(ctx context.Context, closed <-chan struct{}, req, resp int, c costs) error {
	if d.mode == simtime.Realtime && closed != nil {
		var cancel context.CancelFunc
		ctx, cancel = context.WithCancel(ctx)
		defer cancel()
		go func() {
			select {
			case <-closed:
				cancel()
			case <-ctx.Done():
			}
		}()
	}
	wire := d.wire(req, resp)
	if err := simtime.Spend(ctx, d.mode, signertrace.StageWire, wire, d.profile.Name); err != nil {
		return err
	}
	if err := simtime.Spend(ctx, d.mode, signertrace.StageConfirm, c.confirm, d.profile.Name); err != nil {
		return err
	}
	return simtime.Spend(ctx, d.mode, signertrace.StageDevice, c.device, d.profile.Name)
}

// wire is the modeled USB time of an exchange of req and resp bytes.
func (d *Device) wire(req, resp int) time.Duration {
	return time.Duration(reportCount(req)+reportCount(resp)) * d.profile.Report
}

// modeled is an exchange's whole modeled time: wire, confirmation and
// device.
func (d *Device) modeled(req, resp int, c costs) time.Duration {
	return d.wire(req, resp) + c.confirm + c.device
}
