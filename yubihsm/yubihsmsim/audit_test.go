package yubihsmsim

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/signerkit/signerkit/internal/simtime"
	"github.com/signerkit/signerkit/yubihsm"
)

// sdkLogEntry is a log entry as python-yubihsm's LogEntry parses it
// (struct format "!HBHHHHBL16s").
type sdkLogEntry struct {
	number                       uint16
	command                      byte
	length                       uint16
	sessionKey, targetKey, other uint16
	result                       byte
	tick                         uint32
	digest                       [16]byte
}

// data is LogEntry.data: the packed entry without its digest.
func (e sdkLogEntry) data() []byte {
	var b [16]byte
	binary.BigEndian.PutUint16(b[0:], e.number)
	b[2] = e.command
	binary.BigEndian.PutUint16(b[3:], e.length)
	binary.BigEndian.PutUint16(b[5:], e.sessionKey)
	binary.BigEndian.PutUint16(b[7:], e.targetKey)
	binary.BigEndian.PutUint16(b[9:], e.other)
	b[11] = e.result
	binary.BigEndian.PutUint32(b[12:], e.tick)
	return b[:]
}

// validate is python-yubihsm's LogEntry.validate: the previous entry must
// have the previous number (mod 2^16), else it is an error (ValueError);
// the digest must be the first 16 bytes of SHA-256(this entry's data ‖ the
// previous entry's digest), compared in constant time.
func (e sdkLogEntry) validate(prev sdkLogEntry) (bool, error) {
	if e.number-prev.number != 1 {
		return false, fmt.Errorf("previous_entry has wrong number: %d after %d", e.number, prev.number)
	}
	h := sha256.New()
	h.Write(e.data())
	h.Write(prev.digest[:])
	return subtle.ConstantTimeCompare(e.digest[:], h.Sum(nil)[:16]) == 1, nil
}

// sdkLogData is LogData: the unlogged boot and authentication counts and
// the entries.
type sdkLogData struct {
	boot, auth uint16
	entries    []sdkLogEntry
}

// errLogDigest is get_log_entries's "Incorrect log digest".
//
//lint:ignore ST1005 the SDK's message, word for word
var errLogDigest = errors.New("Incorrect log digest")

// sdkParseLogs is get_log_entries on a response payload: "!HHB", then
// that many 32-byte entries (libyubihsm's yh_util_get_log_entries also
// refuses more than 64), each validated against the one before, starting
// from prev when given.
func sdkParseLogs(data []byte, prev *sdkLogEntry) (sdkLogData, error) {
	var out sdkLogData
	if len(data) < 5 {
		return out, fmt.Errorf("log response of %d bytes", len(data))
	}
	out.boot, out.auth = binary.BigEndian.Uint16(data), binary.BigEndian.Uint16(data[2:])
	n := int(data[4])
	data = data[5:]
	if len(data) != n*32 || n > 64 {
		return out, fmt.Errorf("Incorrect length: %d entries in %d bytes", n, len(data))
	}
	for i := 0; i < len(data); i += 32 {
		b := data[i : i+32]
		e := sdkLogEntry{
			number: binary.BigEndian.Uint16(b), command: b[2], length: binary.BigEndian.Uint16(b[3:]),
			sessionKey: binary.BigEndian.Uint16(b[5:]), targetKey: binary.BigEndian.Uint16(b[7:]), other: binary.BigEndian.Uint16(b[9:]),
			result: b[11], tick: binary.BigEndian.Uint32(b[12:]),
		}
		copy(e.digest[:], b[16:])
		if prev != nil {
			ok, err := e.validate(*prev)
			if err != nil {
				return out, err
			}
			if !ok {
				return out, errLogDigest
			}
		}
		out.entries = append(out.entries, e)
		prev = &out.entries[len(out.entries)-1]
	}
	return out, nil
}

// getLogs runs Get Log Entries on h and parses it as get_log_entries does.
func getLogs(t *testing.T, h *host, prev *sdkLogEntry) (sdkLogData, error) {
	t.Helper()
	data, err := sdkPayload(h.do(CmdGetLogEntries, nil), CmdGetLogEntries)
	if err != nil {
		t.Fatalf("get log entries: %v", err)
	}
	return sdkParseLogs(data, prev)
}

// validateChain is python-yubihsm's test_get_log_entries: each entry after
// the first chains from the one before.
func validateChain(t *testing.T, logs []sdkLogEntry) {
	t.Helper()
	for i := 1; i < len(logs); i++ {
		if ok, err := logs[i].validate(logs[i-1]); !ok || err != nil {
			t.Fatalf("entry %d (number %d) does not chain: %v", i, logs[i].number, err)
		}
	}
}

func setLogIndex(t *testing.T, h *host, n uint16) {
	t.Helper()
	if data, err := sdkPayload(h.do(CmdSetLogIndex, binary.BigEndian.AppendUint16(nil, n)), CmdSetLogIndex); err != nil || len(data) != 0 {
		t.Fatalf("set log index %d: %v %x", n, err, data)
	}
}

// TestAuditLogAfterReset: a new device's log is what a factory-reset
// YubiHSM 2 (firmware 2.3.1 and later) shows: the reset line and the boot
// line (python-yubihsm test_logs_after_reset), with the digests that
// device printed.
func TestAuditLogAfterReset(t *testing.T) {
	d := New(Config{})
	h, bad := newHost(t, d, 1, "password")
	if h == nil {
		t.Fatalf("session: %x", bad)
	}
	logs, err := getLogs(t, h, nil)
	if err != nil {
		t.Fatal(err)
	}
	if logs.boot != 0 || logs.auth != 0 || len(logs.entries) != 2 {
		t.Fatalf("after reset: %+v, want no unlogged events and 2 entries (command audit is off by default)", logs)
	}
	if got := logs.entries[0].data(); !bytes.Equal(got, append([]byte{0, 1}, bytes.Repeat([]byte{0xff}, 14)...)) {
		t.Errorf("reset line %x", got)
	}
	if got := logs.entries[1].data(); !bytes.Equal(got, []byte{0, 2, 0, 0, 0, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0}) {
		t.Errorf("boot line %x", got)
	}
	for i, want := range []string{"33012657537e4842f57fa6ed3b09b25b", "fc153091560e18bca82621522c85bdba"} {
		if got := hex.EncodeToString(logs.entries[i].digest[:]); got != want {
			t.Errorf("entry %d digest %s, want %s", i+1, got, want)
		}
	}
	validateChain(t, logs.entries)
}

// TestAuditLogChain: audited commands are logged with the device's digest
// chain, which an independent implementation of python-yubihsm's
// validation accepts; a tampered entry fails it.
func TestAuditLogChain(t *testing.T) {
	clock := simtime.NewManual(time.Unix(1000, 0))
	d := New(Config{Clock: clock, Profile: &NoLatency})
	h, bad := newHost(t, d, 1, "password")
	if h == nil {
		t.Fatalf("session: %x", bad)
	}
	// Log what signs and makes keys, and the log index (as yubihsm-shell's
	// put-option --opt-name command-audit does).
	if bad := sdkPutOption(h, OptionCommandAudit, []byte{CmdSignEdDSA, 1, CmdGenerateAsymKey, 1, CmdSetLogIndex, 1, CmdCreateSession, 1, CmdAuthenticate, 1}); bad != nil {
		t.Fatalf("command audit: %x", bad)
	}
	clock.Advance(1500 * time.Millisecond)
	h.do(CmdGenerateAsymKey, keyTemplate(0x64, "k", 1, CapSignEdDSA, AlgEd25519))
	pub := h.do(CmdGetPublicKey, []byte{0, 0x64})[4:]
	msg := []byte("a vote to sign")
	sig := h.do(CmdSignEdDSA, append([]byte{0, 0x64}, msg...))
	if len(sig) != 67 || !ed25519.Verify(pub, msg, sig[3:]) {
		t.Fatalf("sign: %x", sig)
	}
	h.do(CmdSignEdDSA, []byte{0, 0x65, 'x'}) // no such key: logged with the error
	h2, bad := newHost(t, d, 1, "password")
	if h2 == nil {
		t.Fatalf("second session: %x", bad)
	}
	logs, err := getLogs(t, h, nil)
	if err != nil {
		t.Fatal(err)
	}
	validateChain(t, logs.entries)
	e := logs.entries
	if len(e) != 2+5 {
		t.Fatalf("%d entries, want 7: %+v", len(e), e)
	}
	want := []sdkLogEntry{
		{number: 3, command: CmdGenerateAsymKey, length: 53, sessionKey: 1, targetKey: 0x64, other: 0xffff, result: 0xc6, tick: 1500},
		{number: 4, command: CmdSignEdDSA, length: uint16(2 + len(msg)), sessionKey: 1, targetKey: 0x64, other: 0xffff, result: 0xea, tick: 1500},
		{number: 5, command: CmdSignEdDSA, length: 3, sessionKey: 1, targetKey: 0x65, other: 0xffff, result: 0x7f, tick: 1500},
		// Session opening, as in the device's published log: session key
		// 0xffff, the authentication key as target, lengths 10 and 17.
		{number: 6, command: CmdCreateSession, length: 10, sessionKey: 0xffff, targetKey: 1, other: 0xffff, result: 0x83, tick: 1500},
		{number: 7, command: CmdAuthenticate, length: 17, sessionKey: 0xffff, targetKey: 1, other: 0xffff, result: 0x84, tick: 1500},
	}
	for i, w := range want {
		got := e[2+i]
		w.digest = got.digest
		if got != w {
			t.Errorf("entry %d:\n got %+v\nwant %+v", w.number, got, w)
		}
	}

	// Tampered: any field, or the digest, breaks the chain.
	raw, _ := sdkPayload(h.do(CmdGetLogEntries, nil), CmdGetLogEntries)
	for _, off := range []int{5 + 4*32 + 2, 5 + 4*32 + 11, 5 + 4*32 + 15, 5 + 4*32 + 20} {
		bad := bytes.Clone(raw)
		bad[off] ^= 0x01
		if _, err := sdkParseLogs(bad, nil); err == nil {
			t.Errorf("entry 5 with byte %d flipped validated", (off-5)%32)
		}
	}
	// From a previous entry, as get_log_entries(previous_entry) does: the
	// right one chains, a wrong number or a forged digest does not.
	if _, err := sdkParseLogs(raw, nil); err != nil {
		t.Fatal(err)
	}
	last := e[len(e)-1]
	setLogIndex(t, h, last.number)
	h.do(CmdSignEdDSA, append([]byte{0, 0x64}, msg...))
	after, err := getLogs(t, h, &last)
	if err != nil {
		t.Fatalf("entries after the index, chained from entry %d: %v", last.number, err)
	}
	if len(after.entries) != 2 || after.entries[0].command != CmdSetLogIndex || after.entries[0].length != 2 || after.entries[1].command != CmdSignEdDSA {
		t.Fatalf("after set log index: %+v", after.entries)
	}
	if _, err := getLogs(t, h, &e[len(e)-2]); err == nil || errors.Is(err, errLogDigest) {
		t.Errorf("chained from the wrong entry: %v, want a wrong-number error", err)
	}
	forged := last
	forged.digest[0] ^= 0xff
	if _, err := getLogs(t, h, &forged); !errors.Is(err, errLogDigest) {
		t.Errorf("chained from a forged digest: %v", err)
	}
	if info, _ := sdkDeviceInfo(h.do); info.logUsed != 2 {
		t.Errorf("log used %d after set log index, want 2", info.logUsed)
	}
}

// TestAuditLogWraps: with force audit off the store is a circular buffer
// of 62 entries; the newest 62 still chain.
func TestAuditLogWraps(t *testing.T) {
	d := New(Config{Profile: &NoLatency})
	h, bad := newHost(t, d, 1, "password")
	if h == nil {
		t.Fatalf("session: %x", bad)
	}
	sdkPutOption(h, OptionCommandAudit, []byte{CmdGetPseudoRandom, 1})
	for range 100 {
		h.do(CmdGetPseudoRandom, []byte{0, 1})
	}
	logs, err := getLogs(t, h, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(logs.entries) != LogSize || logs.entries[LogSize-1].number != 102 || logs.entries[0].number != 102-LogSize+1 {
		t.Fatalf("%d entries, %d to %d", len(logs.entries), logs.entries[0].number, logs.entries[len(logs.entries)-1].number)
	}
	validateChain(t, logs.entries)
	if info, _ := sdkDeviceInfo(h.do); info.logUsed != info.logSize {
		t.Errorf("log %d of %d used", info.logUsed, info.logSize)
	}
}

// TestForceAudit: python-yubihsm's test_forced_log. With force audit on,
// every command is logged; once 62 unread entries fill the store,
// commands get LOG FULL and do not run, Device Info says the log is full,
// sessions still open (their events counted as unlogged) and the log can
// be read and freed with Set Log Index.
func TestForceAudit(t *testing.T) {
	d := New(Config{Profile: &NoLatency})
	h, bad := newHost(t, d, 1, "password")
	if h == nil {
		t.Fatalf("session: %x", bad)
	}
	h.do(CmdGenerateAsymKey, keyTemplate(7, "k", 1, CapSignEdDSA, AlgEd25519))
	logs, _ := getLogs(t, h, nil)
	last := logs.entries[len(logs.entries)-1]
	setLogIndex(t, h, last.number)
	if bad := sdkPutOption(h, OptionForceAudit, []byte{1}); bad != nil {
		t.Fatalf("force audit on: %x", bad)
	}
	var full []byte
	signs := 0
	for range 70 {
		resp := h.do(CmdSignEdDSA, []byte{0, 7, 'm'})
		if resp[0] == CmdError {
			full = resp
			break
		}
		signs++
	}
	if !isErr(full, yubihsm.CodeLogFull) {
		t.Fatalf("after %d signs: %x, want LOG FULL", signs, full)
	}
	if d.Stats().Signs != signs {
		t.Errorf("device signed %d times, answered %d: a refused sign ran", d.Stats().Signs, signs)
	}
	info, err := sdkDeviceInfo(h.do)
	if err != nil || info.logUsed != info.logSize {
		t.Fatalf("device info when full: %+v %v", info, err)
	}
	// Opening a session is always allowed, and counted.
	h2, bad := newHost(t, d, 1, "password")
	if h2 == nil {
		t.Fatalf("session with the log full: %x", bad)
	}
	logs, err = getLogs(t, h2, &last)
	if err != nil {
		t.Fatal(err)
	}
	if logs.auth != 2 || logs.boot != 0 || len(logs.entries) != LogSize {
		t.Fatalf("unlogged boot %d auth %d, %d entries", logs.boot, logs.auth, len(logs.entries))
	}
	last = logs.entries[len(logs.entries)-1]
	setLogIndex(t, h2, last.number)
	if bad := sdkPutOption(h2, OptionForceAudit, []byte{0}); bad != nil {
		t.Fatalf("force audit off: %x", bad)
	}
	for range 70 {
		if resp := h2.do(CmdSignEdDSA, []byte{0, 7, 'm'}); resp[0] != CmdSignEdDSA|0x80 {
			t.Fatalf("sign with force audit off: %x", resp)
		}
	}
	// A power cut logs a boot line when the device is back.
	d.Inject(FaultUnplugged, 1)
	d.Clear(FaultUnplugged)
	h3, bad := newHost(t, d, 1, "password")
	if h3 == nil {
		t.Fatalf("session after replug: %x", bad)
	}
	logs, err = getLogs(t, h3, nil)
	if err != nil {
		t.Fatal(err)
	}
	if b := logs.entries[len(logs.entries)-1]; b.command != 0 || b.sessionKey != 0xffff || b.tick != 0 {
		t.Errorf("last entry after a power cut %+v, want a boot line", b)
	}
}

// TestAuditCapability: the log commands need get-log-entries (bit 0x18).
func TestAuditCapability(t *testing.T) {
	if CapGetLogEntries != 0x0000000001000000 {
		t.Fatalf("get-log-entries is %#x", CapGetLogEntries)
	}
	d := New(Config{})
	d.AddAuthKey(2, "nolog", []byte("pw2"), CapAll&^CapGetLogEntries, CapAll, 0xffff)
	h, bad := newHost(t, d, 2, "pw2")
	if h == nil {
		t.Fatalf("session: %x", bad)
	}
	for _, c := range []struct {
		cmd  byte
		data []byte
	}{{CmdGetLogEntries, nil}, {CmdSetLogIndex, []byte{0, 2}}} {
		if resp := h.do(c.cmd, c.data); !isErr(resp, yubihsm.CodeInsufficientPermissions) {
			t.Errorf("%#x without the capability: %x", c.cmd, resp)
		}
	}
	h1, _ := newHost(t, d, 1, "password")
	if resp := h1.do(CmdGetLogEntries, []byte{0}); !isErr(resp, yubihsm.CodeWrongLength) {
		t.Errorf("get log entries with data: %x", resp)
	}
	if resp := h1.do(CmdSetLogIndex, []byte{0}); !isErr(resp, yubihsm.CodeWrongLength) {
		t.Errorf("set log index of one byte: %x", resp)
	}
}

// FuzzLogValidate: the test's validator, the decoder the audit tests rely
// on, never panics, and the sim's own log always validates.
func FuzzLogValidate(f *testing.F) {
	d := New(Config{})
	h, _ := newHost(f, d, 1, "password")
	raw, _ := sdkPayload(h.do(CmdGetLogEntries, nil), CmdGetLogEntries)
	f.Add(raw)
	f.Add([]byte{0, 0, 0, 0, 1})
	f.Fuzz(func(t *testing.T, b []byte) {
		sdkParseLogs(b, nil)
	})
}

// FuzzTimeLeft: the connector's reading of X-Signerkit-Time-Left never
// panics, and gives no negative time.
func FuzzTimeLeft(f *testing.F) {
	for _, v := range []string{"300000000", "-5", "", "9223372036854775807", "1e9", "00000000000000000000001"} {
		f.Add(v)
	}
	f.Fuzz(func(t *testing.T, v string) {
		h := http.Header{}
		h.Set(timeLeftHeader, v)
		if left, ok := timeLeft(h); ok && left < 0 {
			t.Fatalf("%q: %v", v, left)
		}
	})
}
