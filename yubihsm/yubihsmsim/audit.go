package yubihsmsim

import (
	"crypto/sha256"
	"encoding/binary"
	"time"

	"github.com/signerkit/signerkit/yubihsm"
)

// The audit log, as Yubico's SDK reads it (python-yubihsm core.py LogEntry,
// LogData, get_log_entries, set_log_index; libyubihsm lib/yubihsm.c
// yh_util_get_log_entries, yh_util_set_log_index, yh_verify_logs) and as
// Yubico's documentation describes it (Concepts/Logs, Commands/Get Log
// Entries and Set Log Index, the Set Command Audit Option guide).

// Audit log commands.
const (
	CmdGetLogEntries = 0x4d
	CmdSetLogIndex   = 0x67
)

// CapGetLogEntries is the capability Get Log Entries and Set Log Index
// need: bit 0x18, "get-log-entries" in yubihsm-shell (it was called
// "audit" in older releases, which covered both commands).
const CapGetLogEntries uint64 = 1 << 0x18

// LogSize is how many entries the Log Store holds, as Device Info
// reports: 62 (Yubico's Concepts/Logs page).
const LogSize = 62

// LogEntryLen is the size of one log entry on the wire: item number (2),
// command (1), length (2), session key (2), target key (2), second key (2),
// result (1), systick (4), digest (16).
const LogEntryLen = 32

// noKey is what an entry says where it names no object.
const noKey = 0xffff

// logEntry is one Log Store entry.
type logEntry struct {
	number                        uint16
	cmd                           byte
	length                        uint16
	sessionKey, targetKey, second uint16
	result                        byte
	tick                          uint32
	digest                        [16]byte
}

// data is the entry without its digest, the 16 bytes the digest covers.
func (e *logEntry) data() []byte {
	b := binary.BigEndian.AppendUint16(make([]byte, 0, LogEntryLen), e.number)
	b = append(b, e.cmd)
	b = binary.BigEndian.AppendUint16(b, e.length)
	b = binary.BigEndian.AppendUint16(b, e.sessionKey)
	b = binary.BigEndian.AppendUint16(b, e.targetKey)
	b = binary.BigEndian.AppendUint16(b, e.second)
	b = append(b, e.result)
	return binary.BigEndian.AppendUint32(b, e.tick)
}

// resetDigest is the digest of the first entry ("reset line") a YubiHSM 2
// showed after a factory reset, in yubihsm-shell's "audit get" output
// published with its entries (item 1: command 0xff, every field all ones;
// item 2, the boot line, chains from it to fc153091…). How the device
// derives it is not published; the sim starts its chain from the same
// value, so its first two entries are the ones that device printed.
var resetDigest = [16]byte{0x33, 0x01, 0x26, 0x57, 0x53, 0x7e, 0x48, 0x42, 0xf5, 0x7f, 0xa6, 0xed, 0x3b, 0x09, 0xb2, 0x5b}

// auditLog is the Log Store and its counters.
type auditLog struct {
	entries      []logEntry // unread entries, oldest first; at most LogSize
	last         logEntry   // the newest entry ever written: the chain goes on from it
	unloggedBoot uint16
	unloggedAuth uint16
	boot         time.Time // systick counts from here
}

// resetLog sets the log as a factory reset leaves it: the reset line and
// a boot line (python-yubihsm tests/device/test_logs.py
// test_logs_after_reset: on firmware 2.3.1 and later these two are all).
func (d *Device) resetLog() {
	reset := logEntry{number: 1, cmd: 0xff, length: 0xffff, sessionKey: 0xffff, targetKey: 0xffff, second: 0xffff, result: 0xff, tick: 0xffffffff, digest: resetDigest}
	d.log = auditLog{entries: []logEntry{reset}, last: reset}
	d.bootLine()
}

// bootLine logs a power-on: command 0, session key 0xffff, the rest 0
// (the boot line of test_logs_after_reset), and restarts the systick.
func (d *Device) bootLine() {
	d.log.boot = d.clock.Now()
	if !d.appendLog(logEntry{sessionKey: noKey}) {
		d.log.unloggedBoot++
	}
}

// logFull reports whether force audit forbids another entry: the store
// holds LogSize unread entries.
func (d *Device) logFull() bool {
	return d.opts.forceAudit != 0 && len(d.log.entries) >= LogSize
}

// appendLog numbers, timestamps and chains e and stores it, dropping the
// oldest entry when the store is full (a circular buffer, Concepts/Logs),
// unless force audit is on: then it stores nothing and returns false.
func (d *Device) appendLog(e logEntry) bool {
	if d.logFull() {
		return false
	}
	e.number = d.log.last.number + 1
	if e.cmd != 0 || e.sessionKey != noKey { // the boot line has tick 0
		e.tick = uint32(max(d.clock.Now().Sub(d.log.boot)/time.Millisecond, 0))
	}
	h := sha256.New()
	h.Write(e.data())
	h.Write(d.log.last.digest[:])
	copy(e.digest[:], h.Sum(nil))
	if len(d.log.entries) >= LogSize {
		d.log.entries = append(d.log.entries[:0], d.log.entries[1:]...)
	}
	d.log.entries = append(d.log.entries, e)
	d.log.last = e
	return true
}

// audited reports whether cmd is logged: when force audit is on (the Set
// Command Audit Option guide: force audit turns logging on for all
// commands) or its command-audit setting is on or fixed. Echo, Device Info
// and Get Log Entries are never logged: python-yubihsm's log tests leave
// them out when they turn every command's audit on.
func (d *Device) audited(cmd byte) bool {
	switch cmd {
	case CmdEcho, CmdDeviceInfo, CmdGetLogEntries, CmdSessionMessage, CmdError:
		return false
	}
	return d.opts.forceAudit != 0 || d.opts.commandAudit[cmd] != 0
}

// logCommand logs one executed command if it is audited. The entry's
// result is the response's first byte (cmd | 0x80, or 0x7f for an error:
// python-yubihsm calls it "the result byte of the response"), its length
// the command's payload length. A session-opening command that finds the
// store full under force audit is counted as an unlogged authentication
// (Concepts/Logs: those commands are always allowed).
func (d *Device) logCommand(cmd byte, length int, sessionKey, target uint16, resp []byte) {
	if !d.audited(cmd) {
		return
	}
	e := logEntry{cmd: cmd, length: uint16(length), sessionKey: sessionKey, targetKey: target, second: noKey, result: resp[0]}
	if !d.appendLog(e) && (cmd == CmdCreateSession || cmd == CmdAuthenticate) {
		d.log.unloggedAuth++
	}
}

// refusedByLog reports whether force audit refuses cmd before it runs:
// the store is full and cmd would be logged. Create and Authenticate
// Session, and Set Log Index which frees the store, are always allowed
// (Concepts/Logs), so that logs can always be read and freed.
func (d *Device) refusedByLog(cmd byte) bool {
	return cmd != CmdSetLogIndex && d.audited(cmd) && d.logFull()
}

// getLogEntries answers Get Log Entries (no data): unlogged boot events
// (2), unlogged authentication events (2), the number of entries (1), then
// the unread entries, oldest first.
func (d *Device) getLogEntries(s *session, p []byte) []byte {
	if len(p) != 0 {
		return errFrame(yubihsm.CodeWrongLength)
	}
	if s.auth.caps&CapGetLogEntries == 0 {
		return errFrame(yubihsm.CodeInsufficientPermissions)
	}
	out := binary.BigEndian.AppendUint16(nil, d.log.unloggedBoot)
	out = binary.BigEndian.AppendUint16(out, d.log.unloggedAuth)
	out = append(out, byte(len(d.log.entries)))
	for i := range d.log.entries {
		e := &d.log.entries[i]
		out = append(append(out, e.data()...), e.digest[:]...)
	}
	return okFrame(CmdGetLogEntries, out)
}

// setLogIndex answers Set Log Index: the number (2) of the last entry the
// caller has read; it and every older entry are dropped from the store
// (python-yubihsm's test_forced_log reads the entries after that number
// next, chaining from it), so force audit has room again. Item numbers
// wrap at 16 bits; an index "older" means within 32768 before.
func (d *Device) setLogIndex(s *session, p []byte) []byte {
	if len(p) != 2 {
		return errFrame(yubihsm.CodeWrongLength)
	}
	if s.auth.caps&CapGetLogEntries == 0 {
		return errFrame(yubihsm.CodeInsufficientPermissions)
	}
	index := binary.BigEndian.Uint16(p)
	n := 0
	for n < len(d.log.entries) && index-d.log.entries[n].number < 0x8000 {
		n++
	}
	d.log.entries = append(d.log.entries[:0], d.log.entries[n:]...)
	return okFrame(CmdSetLogIndex, nil)
}

// logTarget is the object a command names, for its log entry: the id the
// command's payload starts with, or for Put and Generate the id the
// device answered; 0xffff for commands without one.
func logTarget(cmd byte, p, resp []byte) uint16 {
	switch cmd {
	case CmdPutAsymmetricKey, CmdGenerateAsymKey, CmdPutOpaque, CmdPutAuthKey, CmdPutWrapKey, CmdGenerateWrapKey:
		if resp[0] == cmd|0x80 && len(resp) >= 5 {
			return binary.BigEndian.Uint16(resp[3:])
		}
	case CmdGetPublicKey, CmdSignEdDSA, CmdSignECDSA, CmdGetObjectInfo, CmdDeleteObject, CmdGetOpaque, CmdChangeAuthKey, CmdExportWrapped, CmdImportWrapped:
	default:
		return noKey
	}
	if len(p) < 2 {
		return noKey
	}
	return binary.BigEndian.Uint16(p)
}
