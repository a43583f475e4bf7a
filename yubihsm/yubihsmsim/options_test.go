package yubihsmsim

import (
	"encoding/binary"
	"testing"

	"github.com/signerkit/signerkit/yubihsm"
)

// sdkPutOption builds Set Option as python-yubihsm's put_option does:
// option, two-byte length, value; it wants an empty answer.
func sdkPutOption(h *host, option byte, value []byte) []byte {
	p := binary.BigEndian.AppendUint16([]byte{option}, uint16(len(value)))
	resp := h.do(CmdSetOption, append(p, value...))
	if data, err := sdkPayload(resp, CmdSetOption); err != nil || len(data) != 0 {
		return resp
	}
	return nil
}

// sdkEnabledAlgorithms reads the algorithm toggle as
// get_enabled_algorithms does: pairs of algorithm and on/off; on INVALID
// DATA it falls back to Device Info's list, all on.
func sdkEnabledAlgorithms(t *testing.T, h *host) map[byte]bool {
	t.Helper()
	resp := h.do(CmdGetOption, []byte{OptionAlgorithmToggle})
	if isErr(resp, yubihsm.CodeInvalidData) {
		t.Fatal("algorithm toggle refused")
	}
	data, err := sdkPayload(resp, CmdGetOption)
	if err != nil || len(data)%2 != 0 {
		t.Fatalf("algorithm toggle: %v %x", err, data)
	}
	out := map[byte]bool{}
	for i := 0; i < len(data); i += 2 {
		out[data[i]] = data[i+1] != 0
	}
	return out
}

func TestOptions(t *testing.T) {
	d := New(Config{})
	h, bad := newHost(t, d, 1, "password")
	if h == nil {
		t.Fatalf("session: %x", bad)
	}
	algs := sdkEnabledAlgorithms(t, h)
	if len(algs) != 3 || !algs[AlgP256] || !algs[AlgAuthAES] || !algs[AlgEd25519] {
		t.Fatalf("enabled algorithms: %v", algs)
	}
	if bad := sdkPutOption(h, OptionAlgorithmToggle, []byte{AlgP256, 0}); bad != nil {
		t.Fatalf("toggle P-256 off: %x", bad)
	}
	if algs := sdkEnabledAlgorithms(t, h); algs[AlgP256] || !algs[AlgEd25519] {
		t.Fatalf("after toggling P-256 off: %v", algs)
	}
	if bad := sdkPutOption(h, OptionAlgorithmToggle, []byte{1, 0}); !isErr(bad, yubihsm.CodeInvalidData) {
		t.Errorf("toggle an algorithm the sim lacks: %x", bad)
	}

	// Force audit: one byte; fixed stays fixed.
	if data, err := sdkPayload(h.do(CmdGetOption, []byte{OptionForceAudit}), CmdGetOption); err != nil || len(data) != 1 || data[0] != 0 {
		t.Fatalf("force audit: %v %x", err, data)
	}
	if bad := sdkPutOption(h, OptionForceAudit, []byte{2}); bad != nil {
		t.Fatalf("force audit fixed: %x", bad)
	}
	if bad := sdkPutOption(h, OptionForceAudit, []byte{0}); !isErr(bad, yubihsm.CodeInvalidData) {
		t.Errorf("force audit off after fixed: %x", bad)
	}
	// Command audit: pairs, read back as set_command_audit wrote them.
	if bad := sdkPutOption(h, OptionCommandAudit, []byte{CmdEcho, 0, CmdListObjects, 1}); bad != nil {
		t.Fatalf("command audit: %x", bad)
	}
	if data, err := sdkPayload(h.do(CmdGetOption, []byte{OptionCommandAudit}), CmdGetOption); err != nil || string(data) != string([]byte{CmdEcho, 0, CmdListObjects, 1}) {
		t.Fatalf("command audit back: %v %x", err, data)
	}
	// FIPS mode (5): no FIPS device, INVALID DATA; bad lengths.
	if resp := h.do(CmdGetOption, []byte{5}); !isErr(resp, yubihsm.CodeInvalidData) {
		t.Errorf("fips mode: %x", resp)
	}
	if resp := h.do(CmdSetOption, []byte{OptionForceAudit, 0, 2, 1}); !isErr(resp, yubihsm.CodeWrongLength) {
		t.Errorf("set option, length field past the data: %x", resp)
	}
	if resp := h.do(CmdGetOption, nil); !isErr(resp, yubihsm.CodeWrongLength) {
		t.Errorf("get option, no data: %x", resp)
	}

	// Without the capabilities: INSUFFICIENT PERMISSIONS.
	d.AddAuthKey(2, "nooptions", []byte("pw2"), CapAll&^(CapGetOption|CapSetOption), CapAll, 0xffff)
	h2, bad := newHost(t, d, 2, "pw2")
	if h2 == nil {
		t.Fatalf("session 2: %x", bad)
	}
	if resp := h2.do(CmdGetOption, []byte{OptionAlgorithmToggle}); !isErr(resp, yubihsm.CodeInsufficientPermissions) {
		t.Errorf("get option without the capability: %x", resp)
	}
	if bad := sdkPutOption(h2, OptionForceAudit, []byte{1}); !isErr(bad, yubihsm.CodeInsufficientPermissions) {
		t.Errorf("set option without the capability: %x", bad)
	}
}
