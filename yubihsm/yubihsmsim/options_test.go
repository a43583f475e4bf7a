package yubihsmsim

import (
	"bytes"
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
	// The toggle lists what Device Info lists, all on.
	info, err := sdkDeviceInfo(h.do)
	if err != nil {
		t.Fatal(err)
	}
	algs := sdkEnabledAlgorithms(t, h)
	if len(algs) != len(info.algorithms) || len(algs) != len(algorithms) {
		t.Fatalf("toggle lists %d algorithms, Device Info %d", len(algs), len(info.algorithms))
	}
	for a := range info.algorithms {
		if on, ok := algs[a]; !ok || !on {
			t.Fatalf("algorithm %d: in the toggle %v, enabled %v", a, ok, on)
		}
	}
	if bad := sdkPutOption(h, OptionAlgorithmToggle, []byte{AlgP256, 0}); bad != nil {
		t.Fatalf("toggle P-256 off: %x", bad)
	}
	if algs := sdkEnabledAlgorithms(t, h); algs[AlgP256] || !algs[AlgEd25519] {
		t.Fatalf("after toggling P-256 off: %v", algs)
	}
	if info2, _ := sdkDeviceInfo(h.do); len(info2.algorithms) != len(algorithms) {
		t.Errorf("Device Info after the toggle: %d algorithms; it lists what the device supports", len(info2.algorithms))
	}
	if bad := sdkPutOption(h, OptionAlgorithmToggle, []byte{1, 0}); !isErr(bad, yubihsm.CodeInvalidData) {
		t.Errorf("toggle rsa-pkcs1-sha1, which the sim does not do, off: %x", bad)
	}
	if bad := sdkPutOption(h, OptionAlgorithmToggle, []byte{56, 0}); !isErr(bad, yubihsm.CodeInvalidData) {
		t.Errorf("toggle an algorithm firmware 2.4.0 lacks: %x", bad)
	}
	// Fixed on (2) stays on.
	if bad := sdkPutOption(h, OptionAlgorithmToggle, []byte{AlgOpaqueData, 2}); bad != nil {
		t.Fatalf("fix opaque data on: %x", bad)
	}
	if bad := sdkPutOption(h, OptionAlgorithmToggle, []byte{AlgOpaqueData, 0}); !isErr(bad, yubihsm.CodeInvalidData) {
		t.Errorf("turn off an algorithm fixed on: %x", bad)
	}
	if resp := h.do(CmdGetOption, []byte{OptionAlgorithmToggle}); !bytes.Contains(resp, []byte{AlgOpaqueData, 2, AlgOpaqueX509, 1}) {
		t.Errorf("toggle after fixing opaque data: %x", resp)
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
	// Read back, every command is listed, in the device's order (the
	// command audit guide's get-option output), with its setting.
	data, err := sdkPayload(h.do(CmdGetOption, []byte{OptionCommandAudit}), CmdGetOption)
	if err != nil || len(data) != 2*65 || !bytes.HasPrefix(data, []byte{0x01, 0, 0x03, 0, 0x04, 0, 0x05, 0, 0x06, 0, 0x07, 0, 0x09, 0, 0x08, 0}) {
		t.Fatalf("command audit back: %v %x", err, data)
	}
	for i := 0; i < len(data); i += 2 {
		want := byte(0)
		if data[i] == CmdListObjects {
			want = 1
		}
		if data[i+1] != want {
			t.Errorf("command audit of %#x: %d", data[i], data[i+1])
		}
	}
	if bad := sdkPutOption(h, OptionCommandAudit, []byte{0x02, 1}); !isErr(bad, yubihsm.CodeInvalidData) {
		t.Errorf("command audit of a command the device lacks: %x", bad)
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

// TestAlgorithmToggleEnforced: an algorithm turned off is refused with
// ALGORITHM DISABLED where a key of it is made, imported or signs with,
// and works again once turned back on.
func TestAlgorithmToggleEnforced(t *testing.T) {
	d := New(Config{Profile: &NoLatency})
	h, bad := newHost(t, d, 1, "password")
	if h == nil {
		t.Fatalf("session: %x", bad)
	}
	if resp := h.do(CmdGenerateAsymKey, keyTemplate(7, "ed", 1, CapSignEdDSA, AlgEd25519)); resp[0] != CmdGenerateAsymKey|0x80 {
		t.Fatalf("generate: %x", resp)
	}
	if resp := h.do(CmdGenerateAsymKey, keyTemplate(8, "p256", 1, CapSignECDSA, AlgP256)); resp[0] != CmdGenerateAsymKey|0x80 {
		t.Fatalf("generate: %x", resp)
	}
	if bad := sdkPutOption(h, OptionAlgorithmToggle, []byte{AlgEd25519, 0, AlgP256, 0, AlgOpaqueData, 0}); bad != nil {
		t.Fatalf("toggle off: %x", bad)
	}
	digest := make([]byte, 32)
	for name, resp := range map[string][]byte{
		"sign eddsa":    h.do(CmdSignEdDSA, []byte{0, 7, 'm'}),
		"sign ecdsa":    h.do(CmdSignECDSA, append([]byte{0, 8}, digest...)),
		"generate ed":   h.do(CmdGenerateAsymKey, keyTemplate(9, "ed", 1, CapSignEdDSA, AlgEd25519)),
		"put ed":        h.do(CmdPutAsymmetricKey, append(keyTemplate(10, "ed", 1, CapSignEdDSA, AlgEd25519), make([]byte, 32)...)),
		"generate p256": h.do(CmdGenerateAsymKey, keyTemplate(11, "p", 1, CapSignECDSA, AlgP256)),
		"put opaque":    h.do(CmdPutOpaque, append(keyTemplate(12, "o", 1, 0, AlgOpaqueData), 1)),
	} {
		if !isErr(resp, yubihsm.CodeAlgorithmDisabled) {
			t.Errorf("%s with the algorithm off: %x, want ALGORITHM DISABLED", name, resp)
		}
	}
	if d.Stats().Signs != 0 {
		t.Errorf("%d signs made with algorithms off", d.Stats().Signs)
	}
	if bad := sdkPutOption(h, OptionAlgorithmToggle, []byte{AlgEd25519, 1}); bad != nil {
		t.Fatalf("toggle on: %x", bad)
	}
	if resp := h.do(CmdSignEdDSA, []byte{0, 7, 'm'}); resp[0] != CmdSignEdDSA|0x80 {
		t.Errorf("sign eddsa after turning it back on: %x", resp)
	}
}
