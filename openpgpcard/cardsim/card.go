package cardsim

import (
	"bytes"
	"encoding/binary"
	"io"
	"sync"

	"github.com/signerkit/signerkit/internal/simtime"
	"github.com/signerkit/signerkit/openpgpcard/internal/iso7816"
)

// AID is the OpenPGP application's registered identifier, the prefix of the
// full AID that SELECT names (section 4.2.1).
var AID = []byte{0xD2, 0x76, 0x00, 0x01, 0x24, 0x01}

// Default PINs of a card fresh from the factory.
const (
	DefaultPW1 = "123456"
	DefaultPW3 = "12345678"
)

// MaxTries is the retry counter of each password when it is set.
const MaxTries = 3

// Lengths the card announces in its extended length information (7F66)
// and accepts.
const (
	MaxCommand  = 2048
	MaxResponse = 2048
)

// Config sets up a Card. The zero value is a card with the default PINs,
// no keys, the YubiKey 4 profile and accounted time.
type Config struct {
	// Profile is the token whose timing the card models; the zero Profile
	// means YubiKey4. Its Algorithms are the key attributes the card
	// accepts.
	Profile Profile
	// Time says whether modeled time is slept (simtime.Realtime) or only
	// accounted; the zero value is accounted. ModeFromEnv reads
	// SIGNERKIT_SIM.
	Time simtime.Mode
	// PW1 and PW3 are the user and admin PINs; empty means DefaultPW1 and
	// DefaultPW3.
	PW1, PW3 string
	// Serial is the card's serial number in its AID.
	Serial uint32
	// Rand is the card's randomness; nil means crypto/rand.
	Rand io.Reader
	// ShortOnly makes a card without extended length: its historical
	// bytes announce command chaining only, extended APDUs get 6700, and
	// long responses come in 256-byte parts through GET RESPONSE.
	ShortOnly bool
}

// Card is the OpenPGP card application: its data objects, passwords,
// retry counters and keys. Its Transmit method runs one command APDU
// through the application logic; the faces (Transport, the vpcd client in
// package vpcd) add modeled time and faults around it. A Card is safe for
// concurrent use; commands run one at a time, as on a real card.
type Card struct {
	profile   Profile
	mode      simtime.Mode
	rand      io.Reader
	shortOnly bool

	mu       sync.Mutex
	selected bool
	pw       [3][]byte // PW1, RC (unset), PW3
	tries    [3]int
	pw1Multi bool // PW1 status byte: valid for several CDS
	verified struct{ cds, other, admin bool }
	attrs    [3]Algorithm
	keys     [3]*key
	fprs     [3][20]byte
	times    [3]uint32
	caFprs   [3][20]byte
	dsCount  uint32
	dos      map[uint16][]byte // simple data objects: name, URL, login, …
	serial   uint32

	chain  *iso7816.Command // accumulated chain, if one is open
	rest   []byte           // response bytes GET RESPONSE still returns
	plug   plugState
	faults []Fault
}

// New returns a fresh card: default PINs (or cfg's), no keys, the key
// attributes RSA 2048 where the profile has it (else its first algorithm).
func New(cfg Config) *Card {
	p := cfg.Profile
	if p.Name == "" {
		p = YubiKey4
	}
	c := &Card{profile: p, mode: cfg.Time, rand: cfg.Rand, serial: cfg.Serial, shortOnly: cfg.ShortOnly}
	if c.rand == nil {
		c.rand = defaultRand
	}
	if c.serial == 0 {
		c.serial = 0x5349_4D01
	}
	c.pw[0] = []byte(cfg.PW1)
	c.pw[2] = []byte(cfg.PW3)
	if len(c.pw[0]) == 0 {
		c.pw[0] = []byte(DefaultPW1)
	}
	if len(c.pw[2]) == 0 {
		c.pw[2] = []byte(DefaultPW3)
	}
	c.tries = [3]int{MaxTries, 0, MaxTries}
	def := p.Algorithms[0]
	if p.supports(RSA2048) {
		def = RSA2048
	}
	c.attrs = [3]Algorithm{def, def, def}
	c.dos = map[uint16][]byte{}
	c.plug.init()
	return c
}

// Profile returns the card's latency profile.
func (c *Card) Profile() Profile { return c.profile }

// Time returns whether the card sleeps its modeled time.
func (c *Card) Time() simtime.Mode { return c.mode }

// Tries returns the retry counters of PW1 and PW3.
func (c *Card) Tries() (pw1, pw3 int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.tries[0], c.tries[2]
}

// Algorithm returns the attributes of slot s.
func (c *Card) Algorithm(s Slot) Algorithm {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.attrs[s]
}

// Transmit runs one command APDU and returns the response APDU. It has no
// modeled time and no faults: it is the application logic alone, as the
// faces call it.
func (c *Card) Transmit(apdu []byte) []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	resp, _ := c.transmitLocked(apdu)
	return resp
}

// op says which modeled operation a command ran, for the profile.
type op struct {
	kind opKind
	alg  Algorithm
	n    int // message bytes (EdDSA hashes the whole message)
}

type opKind uint8

const (
	opNone opKind = iota
	opSign
	opDecipher
	opGenerate
)

func sw(code uint16) []byte { return iso7816.Response(nil, code) }

// transmitLocked parses and dispatches one APDU, handling chaining and
// GET RESPONSE. The caller holds c.mu.
func (c *Card) transmitLocked(apdu []byte) ([]byte, op) {
	cmd, err := iso7816.ParseCommand(apdu)
	if err != nil {
		c.chain = nil
		return sw(iso7816.SWWrongLength), op{}
	}
	if cmd.Extended && c.shortOnly {
		c.chain = nil
		return sw(iso7816.SWWrongLength), op{}
	}
	if cmd.CLA&^0x10 != 0x00 {
		c.chain = nil
		return sw(iso7816.SWCLANotSupported), op{}
	}
	if cmd.INS == 0xC0 { // GET RESPONSE
		return c.getResponse(cmd), op{}
	}
	c.rest = nil
	if c.chain != nil {
		if c.chain.INS != cmd.INS || c.chain.P1 != cmd.P1 || c.chain.P2 != cmd.P2 {
			c.chain = nil
			return sw(iso7816.SWLastCommandExpected), op{}
		}
		if len(c.chain.Data)+len(cmd.Data) > 65535 {
			c.chain = nil
			return sw(iso7816.SWWrongLength), op{}
		}
		cmd.Data = append(c.chain.Data, cmd.Data...)
	}
	if cmd.Chained() {
		cmd.Data = bytes.Clone(cmd.Data)
		c.chain = &cmd
		return sw(iso7816.SWOK), op{}
	}
	c.chain = nil
	data, code, o := c.dispatch(cmd)
	if code != iso7816.SWOK {
		return sw(code), o
	}
	return c.respond(cmd, data), o
}

// respond returns data within the command's Le: all of it in an extended
// APDU, else the first Le bytes with 61xx and the rest for GET RESPONSE.
func (c *Card) respond(cmd iso7816.Command, data []byte) []byte {
	if cmd.Extended || len(data) <= 256 && (cmd.Le == 0 || len(data) <= cmd.Le) {
		if cmd.Le > 0 && len(data) > cmd.Le {
			data = data[:cmd.Le]
		}
		return iso7816.Response(data, iso7816.SWOK)
	}
	n := min(len(data), 256)
	if cmd.Le > 0 {
		n = min(n, cmd.Le)
	}
	c.rest = bytes.Clone(data[n:])
	return iso7816.Response(data[:n], moreData(len(c.rest)))
}

func moreData(n int) uint16 {
	if n >= 256 {
		return iso7816.SWMoreData
	}
	return iso7816.SWMoreData | uint16(n)
}

func (c *Card) getResponse(cmd iso7816.Command) []byte {
	if len(c.rest) == 0 {
		return sw(iso7816.SWConditionsNotSatisfied)
	}
	n := min(len(c.rest), cmd.Le)
	if cmd.Le == 0 {
		n = min(len(c.rest), 256)
	}
	out := c.rest[:n]
	c.rest = c.rest[n:]
	if len(c.rest) == 0 {
		c.rest = nil
		return iso7816.Response(out, iso7816.SWOK)
	}
	return iso7816.Response(out, moreData(len(c.rest)))
}

// dispatch runs one whole command (a chain already joined).
func (c *Card) dispatch(cmd iso7816.Command) ([]byte, uint16, op) {
	if cmd.INS == 0xA4 {
		return c.selectApp(cmd)
	}
	if !c.selected {
		return nil, iso7816.SWConditionsNotSatisfied, op{}
	}
	switch cmd.INS {
	case 0x20:
		code := c.verify(cmd)
		return nil, code, op{}
	case 0x24:
		return nil, c.changePIN(cmd), op{}
	case 0x2C:
		return nil, c.resetRetryCounter(cmd), op{}
	case 0xCA, 0xCB:
		data, code := c.getData(cmd)
		return data, code, op{}
	case 0xDA, 0xDB:
		return nil, c.putData(cmd), op{}
	case 0x47:
		return c.generateKeyPair(cmd)
	case 0x2A:
		return c.pso(cmd)
	case 0x88:
		return c.internalAuthenticate(cmd)
	case 0xF1: // a YubiKey's GET VERSION
		if c.profile.Firmware == ([3]byte{}) {
			return nil, iso7816.SWINSNotSupported, op{}
		}
		return c.profile.Firmware[:], iso7816.SWOK, op{}
	case 0xA5: // SELECT DATA (section 7.2.5): which cardholder certificate
		if cmd.P1 > 2 || cmd.P2 != 0x04 || len(cmd.Data) == 0 || cmd.Data[0] != 0x60 {
			return nil, iso7816.SWWrongP1P2, op{}
		}
		return nil, iso7816.SWOK, op{}
	case 0x84: // GET CHALLENGE
		n := max(cmd.Le, 1)
		if n > 256 {
			n = 256
		}
		b := make([]byte, n)
		if _, err := io.ReadFull(c.rand, b); err != nil {
			return nil, iso7816.SWConditionsNotSatisfied, op{}
		}
		return b, iso7816.SWOK, op{}
	}
	return nil, iso7816.SWINSNotSupported, op{}
}

func (c *Card) selectApp(cmd iso7816.Command) ([]byte, uint16, op) {
	if cmd.P1 != 0x04 {
		return nil, iso7816.SWFileNotFound, op{}
	}
	if len(cmd.Data) < 5 || !bytes.HasPrefix(c.aid(), cmd.Data) && !bytes.HasPrefix(cmd.Data, AID) {
		return nil, iso7816.SWFileNotFound, op{}
	}
	c.selected = true
	c.verified.cds, c.verified.other, c.verified.admin = false, false, false
	return nil, iso7816.SWOK, op{}
}

// aid is the full AID: RID, application, version 3.4, manufacturer 0xFFFE
// (test card), serial, RFU.
func (c *Card) aid() []byte {
	b := append(bytes.Clone(AID), 0x03, 0x04, 0xFF, 0xFE)
	b = binary.BigEndian.AppendUint32(b, c.serial)
	return append(b, 0x00, 0x00)
}

// verify is VERIFY (section 7.2.2): P2 81 PW1 for signing, 82 PW1 for
// other commands, 83 PW3. Empty data asks the state; P1 FF resets it.
func (c *Card) verify(cmd iso7816.Command) uint16 {
	idx, flag := 0, &c.verified.cds
	switch cmd.P2 {
	case 0x81:
	case 0x82:
		flag = &c.verified.other
	case 0x83:
		idx, flag = 2, &c.verified.admin
	default:
		return iso7816.SWWrongP1P2
	}
	switch {
	case cmd.P1 == 0xFF && len(cmd.Data) == 0:
		*flag = false
		return iso7816.SWOK
	case cmd.P1 != 0x00:
		return iso7816.SWWrongP1P2
	case len(cmd.Data) == 0:
		if *flag {
			return iso7816.SWOK
		}
		return iso7816.SWPINRetries | uint16(c.tries[idx])
	}
	return c.checkPIN(idx, cmd.Data, flag)
}

// checkPIN compares a PIN, counting down and blocking (6983) at zero.
func (c *Card) checkPIN(idx int, pin []byte, flag *bool) uint16 {
	if c.tries[idx] == 0 {
		return iso7816.SWAuthBlocked
	}
	if !bytes.Equal(pin, c.pw[idx]) {
		c.tries[idx]--
		*flag = false
		if c.tries[idx] == 0 {
			return iso7816.SWAuthBlocked
		}
		return iso7816.SWPINRetries | uint16(c.tries[idx])
	}
	c.tries[idx] = MaxTries
	*flag = true
	return iso7816.SWOK
}

// changePIN is CHANGE REFERENCE DATA: old PIN followed by new, P2 81 or 83.
func (c *Card) changePIN(cmd iso7816.Command) uint16 {
	idx := 0
	switch cmd.P2 {
	case 0x81:
	case 0x83:
		idx = 2
	default:
		return iso7816.SWWrongP1P2
	}
	old := len(c.pw[idx])
	if len(cmd.Data) < old+minPIN(idx) {
		return iso7816.SWWrongLength
	}
	var ok bool
	if code := c.checkPIN(idx, cmd.Data[:old], &ok); code != iso7816.SWOK {
		return code
	}
	c.pw[idx] = bytes.Clone(cmd.Data[old:])
	return iso7816.SWOK
}

func minPIN(idx int) int {
	if idx == 2 {
		return 8
	}
	return 6
}

// resetRetryCounter is RESET RETRY COUNTER with P1 02: PW3 verified, data
// the new PW1.
func (c *Card) resetRetryCounter(cmd iso7816.Command) uint16 {
	if cmd.P1 != 0x02 || cmd.P2 != 0x81 {
		return iso7816.SWWrongP1P2
	}
	if !c.verified.admin {
		return iso7816.SWSecurityNotSatisfied
	}
	if len(cmd.Data) < 6 {
		return iso7816.SWWrongLength
	}
	c.pw[0] = bytes.Clone(cmd.Data)
	c.tries[0] = MaxTries
	return iso7816.SWOK
}
