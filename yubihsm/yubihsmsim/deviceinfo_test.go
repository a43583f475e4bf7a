package yubihsmsim

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"unicode/utf8"

	"github.com/signerkit/signerkit/internal/scp03"
	"github.com/signerkit/signerkit/yubihsm"
)

// sdkInfo is what Yubico's client libraries make of Device Info.
type sdkInfo struct {
	version          [3]byte
	serial           uint32
	logSize, logUsed byte
	algorithms       map[byte]bool
	partNumber       string // "" when the firmware has no page 1
}

// sdkPayload checks a plain response frame the way python-yubihsm's
// send_cmd does (length field, error frame, response code = command|0x80)
// and returns its data.
func sdkPayload(resp []byte, cmd byte) ([]byte, error) {
	if len(resp) < 3 {
		return nil, fmt.Errorf("short response %x", resp)
	}
	n := int(binary.BigEndian.Uint16(resp[1:3]))
	if len(resp) < 3+n {
		return nil, fmt.Errorf("response %x shorter than its length field", resp)
	}
	if resp[0] == CmdError {
		return nil, fmt.Errorf("device error %v", yubihsm.ErrorCode(resp[3]))
	}
	if resp[0] != cmd|0x80 {
		return nil, fmt.Errorf("response to %#x has code %#x", cmd, resp[0])
	}
	return resp[3 : 3+n], nil
}

// sdkDeviceInfo asks for device info as python-yubihsm's get_device_info
// (and libyubihsm's yh_util_get_device_info and yh_util_get_partnumber)
// do, and parses it their way: page 0 is major, minor, patch, a big-endian
// 32-bit serial, log size, log used, then one algorithm per byte; on 2.4.0
// and later, page 1 (asked for with the single data byte 1) is the part
// number, its bytes taken whole as a UTF-8 string. libyubihsm also wants
// at least 12 bytes there.
func sdkDeviceInfo(send func(cmd byte, data []byte) []byte) (sdkInfo, error) {
	var info sdkInfo
	first, err := sdkPayload(send(CmdDeviceInfo, nil), CmdDeviceInfo)
	if err != nil {
		return info, err
	}
	if len(first) < 9 {
		return info, fmt.Errorf("page 0 is %d bytes", len(first))
	}
	copy(info.version[:], first[:3])
	info.serial = binary.BigEndian.Uint32(first[3:7])
	info.logSize, info.logUsed = first[7], first[8]
	info.algorithms = map[byte]bool{}
	for _, a := range first[9:] {
		info.algorithms[a] = true
	}
	if info.version[0] < 2 || info.version[0] == 2 && info.version[1] < 4 {
		return info, nil
	}
	second, err := sdkPayload(send(CmdDeviceInfo, []byte{1}), CmdDeviceInfo)
	if err != nil {
		return info, fmt.Errorf("page 1: %w", err)
	}
	if !utf8.Valid(second) {
		return info, fmt.Errorf("page 1 %x is not UTF-8", second)
	}
	if len(second) < 12 {
		return info, fmt.Errorf("part number %q shorter than 12 bytes", second)
	}
	info.partNumber = string(second)
	return info, nil
}

func checkSDKInfo(t *testing.T, where string, info sdkInfo, err error, serial uint32) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", where, err)
	}
	if info.version != [3]byte{2, 4, 0} || info.serial != serial || info.logUsed > info.logSize {
		t.Fatalf("%s: page 0 parsed as %+v", where, info)
	}
	// The sim lists the algorithms it implements (a 2.4.0 device lists 1
	// to 55): a client reading Device Info is not promised RSA.
	if len(info.algorithms) != len(algorithms) {
		t.Errorf("%s: %d algorithms, want %v: %v", where, len(info.algorithms), algorithms, info.algorithms)
	}
	for _, a := range algorithms {
		if !info.algorithms[a] {
			t.Errorf("%s: algorithm %d missing from %v", where, a, info.algorithms)
		}
	}
	if info.logSize != 62 || info.logUsed != 2 {
		t.Errorf("%s: log %d of %d used, want 2 of 62 (the reset and boot lines)", where, info.logUsed, info.logSize)
	}
	if info.partNumber != PartNumber {
		t.Fatalf("%s: part number %q, want %q", where, info.partNumber, PartNumber)
	}
}

// TestDeviceInfoPagesPlain: the device info exchange Yubico's SDK runs on
// connect, over the connector's HTTP API as the SDK sends it.
func TestDeviceInfoPagesPlain(t *testing.T) {
	d := New(Config{Serial: 0x01020304})
	srv := httptest.NewServer(d.Handler())
	defer srv.Close()
	send := func(cmd byte, data []byte) []byte {
		resp, err := http.Post(srv.URL+"/connector/api", "application/octet-stream",
			bytes.NewReader(scp03.Frame{Cmd: cmd, Payload: data}.Bytes()))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("HTTP %d, %v", resp.StatusCode, err)
		}
		return body
	}
	info, err := sdkDeviceInfo(send)
	checkSDKInfo(t, "plain", info, err, 0x01020304)

	// Page 0 asked for explicitly is the same as no page.
	if a, b := send(CmdDeviceInfo, nil), send(CmdDeviceInfo, []byte{0}); !bytes.Equal(a, b) {
		t.Fatalf("page 0: %x, no page: %x", b, a)
	}
	// Pages the firmware does not have, and malformed requests.
	if resp := send(CmdDeviceInfo, []byte{2}); !isErr(resp, yubihsm.CodeInvalidData) {
		t.Errorf("page 2: %x", resp)
	}
	if resp := send(CmdDeviceInfo, []byte{1, 0}); !isErr(resp, yubihsm.CodeWrongLength) {
		t.Errorf("two-byte page: %x", resp)
	}
}

// TestDeviceInfoPagesInSession: the same pages inside a session.
func TestDeviceInfoPagesInSession(t *testing.T) {
	d := New(Config{Serial: 99})
	h, bad := newHost(t, d, 1, "password")
	if h == nil {
		t.Fatalf("session: %x", bad)
	}
	info, err := sdkDeviceInfo(h.do)
	checkSDKInfo(t, "session", info, err, 99)
	if resp := h.do(CmdDeviceInfo, []byte{7}); !isErr(resp, yubihsm.CodeInvalidData) {
		t.Errorf("page 7: %x", resp)
	}
}

// TestUnimplementedCommands: every command the sim does not implement
// answers as the device answers a command it refuses, an error frame with
// INVALID COMMAND, plain and in a session, and the session survives.
func TestUnimplementedCommands(t *testing.T) {
	plain := map[byte]bool{CmdEcho: true, CmdCreateSession: true, CmdAuthenticate: true, CmdSessionMessage: true, CmdDeviceInfo: true}
	inSession := map[byte]bool{CmdEcho: true, CmdDeviceInfo: true, CmdCloseSession: true,
		CmdPutAsymmetricKey: true, CmdGenerateAsymKey: true, CmdGetPublicKey: true, CmdSignEdDSA: true,
		CmdSignECDSA: true, CmdListObjects: true, CmdGetObjectInfo: true, CmdDeleteObject: true,
		CmdGetPseudoRandom: true, CmdBlinkDevice: true, CmdGetStorageInfo: true, CmdPutOpaque: true,
		CmdGetOpaque: true, CmdPutAuthKey: true, CmdChangeAuthKey: true, CmdGetOption: true, CmdSetOption: true,
		CmdGetLogEntries: true, CmdSetLogIndex: true,
		CmdPutWrapKey: true, CmdGenerateWrapKey: true, CmdExportWrapped: true, CmdImportWrapped: true}
	d := New(Config{})
	for c := 0; c < 0x80; c++ {
		if plain[byte(c)] {
			continue
		}
		for _, data := range [][]byte{nil, {0, 1, 2, 3}} {
			if resp := handle(t, d, scp03.Frame{Cmd: byte(c), Payload: data}.Bytes()); !isErr(resp, yubihsm.CodeInvalidCommand) {
				t.Errorf("plain %#x: %x", c, resp)
			}
		}
	}
	h, bad := newHost(t, d, 1, "password")
	if h == nil {
		t.Fatalf("session: %x", bad)
	}
	for c := 0; c < 0x80; c++ {
		if inSession[byte(c)] {
			continue
		}
		if resp := h.do(byte(c), []byte{0, 1, 2, 3}); !isErr(resp, yubihsm.CodeInvalidCommand) {
			t.Errorf("in session %#x: %x", c, resp)
		}
	}
	if resp := h.do(CmdEcho, []byte("ok")); !bytes.Equal(resp, []byte{CmdEcho | 0x80, 0, 2, 'o', 'k'}) {
		t.Fatalf("echo after refused commands: %x", resp)
	}
}

func TestPseudoRandomAndBlink(t *testing.T) {
	d := New(Config{})
	h, bad := newHost(t, d, 1, "password")
	if h == nil {
		t.Fatalf("session: %x", bad)
	}
	for _, n := range []int{0, 1, 32, MaxPseudoRandom} {
		resp := h.do(CmdGetPseudoRandom, binary.BigEndian.AppendUint16(nil, uint16(n)))
		data, err := sdkPayload(resp, CmdGetPseudoRandom)
		if err != nil || len(data) != n {
			t.Fatalf("pseudo random %d: %v, %d bytes", n, err, len(data))
		}
		if n >= 32 && bytes.Equal(data, make([]byte, n)) {
			t.Fatalf("pseudo random %d: all zero", n)
		}
	}
	a := h.do(CmdGetPseudoRandom, []byte{0, 32})
	b := h.do(CmdGetPseudoRandom, []byte{0, 32})
	if bytes.Equal(a, b) {
		t.Fatal("pseudo random repeats")
	}
	if resp := h.do(CmdGetPseudoRandom, binary.BigEndian.AppendUint16(nil, MaxPseudoRandom+1)); !isErr(resp, yubihsm.CodeWrongLength) {
		t.Errorf("pseudo random past the buffer: %x", resp)
	}
	for _, p := range [][]byte{nil, {1}, {0, 1, 2}} {
		if resp := h.do(CmdGetPseudoRandom, p); !isErr(resp, yubihsm.CodeWrongLength) {
			t.Errorf("pseudo random with %x: %x", p, resp)
		}
	}
	// Blink: one byte of seconds, an empty answer.
	if resp := h.do(CmdBlinkDevice, []byte{5}); !bytes.Equal(resp, []byte{CmdBlinkDevice | 0x80, 0, 0}) {
		t.Errorf("blink: %x", resp)
	}
	for _, p := range [][]byte{nil, {1, 2}} {
		if resp := h.do(CmdBlinkDevice, p); !isErr(resp, yubihsm.CodeWrongLength) {
			t.Errorf("blink with %x: %x", p, resp)
		}
	}
	if got := d.Stats().Blinks; got != 1 {
		t.Errorf("Blinks = %d, want 1", got)
	}

	// Without the capability: INSUFFICIENT PERMISSIONS.
	d.AddAuthKey(2, "norandom", []byte("pw2"), CapAll&^CapGetPseudoRandom, CapAll, 0xffff)
	h2, bad := newHost(t, d, 2, "pw2")
	if h2 == nil {
		t.Fatalf("session 2: %x", bad)
	}
	if resp := h2.do(CmdGetPseudoRandom, []byte{0, 8}); !isErr(resp, yubihsm.CodeInsufficientPermissions) {
		t.Errorf("pseudo random without the capability: %x", resp)
	}
}

func TestMaxPseudoRandomFitsAFrame(t *testing.T) {
	if MaxPseudoRandom != (scp03.MaxFrame-3-1-8)/16*16-1-3 {
		t.Fatalf("MaxPseudoRandom = %d, out of step with scp03.MaxFrame %d", MaxPseudoRandom, scp03.MaxFrame)
	}
}
