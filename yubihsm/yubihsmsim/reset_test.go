package yubihsmsim

import (
	"bytes"
	"testing"

	"github.com/signerkit/signerkit/yubihsm"
)

// TestResetDevice: Reset Device answers with no data under the session's
// keys, then the device holds only the factory authentication key, has
// its options and log as after a factory reset, and every session is
// gone; the refusals leave the device as it was.
func TestResetDevice(t *testing.T) {
	d := New(Config{})
	d.AddAuthKey(2, "no reset", []byte("pw2"), CapAll&^CapResetDevice, CapAll, 0xffff)
	h, bad := newHost(t, d, 1, "password")
	if h == nil {
		t.Fatalf("session: %x", bad)
	}
	other, bad := newHost(t, d, 2, "pw2")
	if other == nil {
		t.Fatalf("second session: %x", bad)
	}
	if r := h.do(CmdGenerateAsymKey, keyTemplate(5, "k", 1, CapSignEdDSA, AlgEd25519)); r[0] != CmdGenerateAsymKey|0x80 {
		t.Fatalf("generate: %x", r)
	}
	if r := sdkPutOption(h, OptionForceAudit, []byte{1}); r != nil {
		t.Fatalf("force audit: %x", r)
	}
	if r := other.do(CmdResetDevice, nil); !isErr(r, yubihsm.CodeInsufficientPermissions) {
		t.Fatalf("reset without the capability: %x", r)
	}
	if r := h.do(CmdResetDevice, []byte{0}); !isErr(r, yubihsm.CodeWrongLength) {
		t.Fatalf("reset with data: %x", r)
	}
	if len(d.objects) != 3 {
		t.Fatalf("%d objects after refused resets", len(d.objects))
	}
	if r := h.do(CmdResetDevice, nil); !bytes.Equal(r, []byte{CmdResetDevice | 0x80, 0, 0}) {
		t.Fatalf("reset: %x", r)
	}
	if n := d.OpenSessions(); n != 0 {
		t.Errorf("%d sessions after the reset", n)
	}
	frame, _ := other.wrap([]byte{CmdEcho, 0, 1, 'x'})
	if r := handle(t, d, frame); !isErr(r, yubihsm.CodeInvalidSession) {
		t.Errorf("a session from before the reset: %x", r)
	}
	if _, bad := newHost(t, d, 2, "pw2"); bad == nil {
		t.Error("the erased authentication key 2 opens a session")
	}
	h, bad = newHost(t, d, 1, "password")
	if h == nil {
		t.Fatalf("the factory key after the reset: %x", bad)
	}
	if r := h.do(CmdListObjects, nil); !bytes.Equal(r, []byte{CmdListObjects | 0x80, 0, 4, 0, 1, TypeAuthKey, 0}) {
		t.Errorf("objects after the reset: %x", r)
	}
	if r := h.do(CmdGetOption, []byte{OptionForceAudit}); !bytes.Equal(r, []byte{CmdGetOption | 0x80, 0, 1, 0}) {
		t.Errorf("force audit after the reset: %x", r)
	}
	if info, err := sdkDeviceInfo(h.do); err != nil || info.logUsed != 2 {
		t.Errorf("log after the reset: %d entries (%v), want the reset and boot lines", info.logUsed, err)
	}
}
