package yubihsmsim

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/certusone/yubihsm-go/commands"
	"github.com/certusone/yubihsm-go/connector"
	"github.com/certusone/yubihsm-go/securechannel"

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

// TestYubihsmGoReset: yubihsm-go's Reset command runs (yubihsm-go has no
// parser for its empty answer and says so after checking the R-MAC), and
// the device then holds only the factory key.
func TestYubihsmGoReset(t *testing.T) {
	d := New(Config{})
	srv := httptest.NewServer(d.Handler())
	defer srv.Close()
	defer http.DefaultClient.CloseIdleConnections()
	ch, err := securechannel.NewSecureChannel(connector.NewHTTPConnector(strings.TrimPrefix(srv.URL, "http://")), 1, "password")
	if err != nil {
		t.Fatal(err)
	}
	if err := ch.Authenticate(); err != nil {
		t.Fatal(err)
	}
	m, _ := commands.CreateGenerateAsymmetricKeyCommand(5, []byte("k"), 1, commands.CapabilityAsymmetricSignEddsa, commands.AlgorithmED25519)
	if _, err := ch.SendEncryptedCommand(m); err != nil {
		t.Fatal(err)
	}
	reset, _ := commands.CreateResetCommand()
	if _, err := ch.SendEncryptedCommand(reset); err == nil || !strings.Contains(err.Error(), "response type unknown") {
		t.Fatalf("reset through yubihsm-go: %v", err)
	}
	if ch.Counter != 3 {
		t.Errorf("yubihsm-go counted %d commands: the answer's R-MAC did not verify", ch.Counter-1)
	}
	d.mu.Lock()
	n := len(d.objects)
	d.mu.Unlock()
	if n != 1 || d.OpenSessions() != 0 {
		t.Errorf("after the reset: %d objects, %d sessions", n, d.OpenSessions())
	}
}
