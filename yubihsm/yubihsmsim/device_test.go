package yubihsmsim

import (
	"bytes"
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/ed25519"
	"encoding/binary"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/signerkit/signerkit/internal/scp03"
	"github.com/signerkit/signerkit/internal/simtime"
	"github.com/signerkit/signerkit/signer/signertrace"
	"github.com/signerkit/signerkit/yubihsm"
)

func unhex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func handle(t testing.TB, d *Device, frame []byte) []byte {
	t.Helper()
	resp, _, err := d.Handle(context.Background(), frame)
	if err != nil {
		t.Fatalf("Handle(%x): %v", frame, err)
	}
	return resp
}

// TestKAT drives the device with the frames of docs/protocols.md B.4 and checks
// that its answers are the known ones, byte for byte.
func TestKAT(t *testing.T) {
	d := New(Config{Rand: bytes.NewReader(unhex(t, "08090a0b0c0d0e0f"))})
	resp := handle(t, d, unhex(t, "03 000a 0001 0001020304050607"))
	if want := "83001100" + "08090a0b0c0d0e0f" + "0d89ea51bf1bf533"; hex.EncodeToString(resp) != want {
		t.Fatalf("Create Session answered %x, want %s", resp, want)
	}
	if resp := handle(t, d, unhex(t, "04 0011 00 b01410d72022ed0e c1e620c499fbf1a9")); hex.EncodeToString(resp) != "840000" {
		t.Fatalf("Authenticate Session answered %x", resp)
	}
	resp = handle(t, d, unhex(t, "0500190046a77ba4f8e023365ef5ac2b0680f95b4e028f51312e55d4"))
	if want := "85001900677408825ed3b2da31f14eee4809ce12d4df95574f813914"; hex.EncodeToString(resp) != want {
		t.Fatalf("Echo answered %x, want %s", resp, want)
	}
	// The same command again is out of the MAC chain: refused, in plain.
	resp = handle(t, d, unhex(t, "0500190046a77ba4f8e023365ef5ac2b0680f95b4e028f51312e55d4"))
	if hex.EncodeToString(resp) != "7f000104" {
		t.Fatalf("replayed command answered %x, want 7f000104", resp)
	}
}

// host is a minimal host side of SCP03 for the device's tests.
type host struct {
	t       testing.TB
	d       *Device
	sid     byte
	keys    scp03.SessionKeys
	block   cipher.Block
	chain   [16]byte
	counter uint32
}

func newHost(t testing.TB, d *Device, authID uint16, password string) (*host, []byte) {
	t.Helper()
	hc := []byte("hostchal")
	resp := handle(t, d, scp03.Frame{Cmd: CmdCreateSession, Payload: append(binary.BigEndian.AppendUint16(nil, authID), hc...)}.Bytes())
	if resp[0] != CmdCreateSession|0x80 {
		return nil, resp
	}
	h := &host{t: t, d: d, sid: resp[3]}
	card := resp[4:12]
	var enc, mac [scp03.KeyLen]byte
	if password == "password" {
		k := defaultAuthKey()
		enc, mac = k[0], k[1]
	} else {
		enc, mac = scp03.AuthKey([]byte(password))
	}
	h.keys = scp03.DeriveSessionKeys(enc[:], mac[:], hc, card)
	if !bytes.Equal(h.keys.Cryptogram(scp03.ConstCardCryptogram, hc, card), resp[12:20]) {
		return nil, resp
	}
	hcrypt := h.keys.Cryptogram(scp03.ConstHostCryptogram, hc, card)
	var zero [16]byte
	h.chain = scp03.MAC(h.keys.MAC[:], zero[:], CmdAuthenticate, h.sid, hcrypt)
	resp = handle(t, d, scp03.Frame{Cmd: CmdAuthenticate, Payload: append(append([]byte{h.sid}, hcrypt...), h.chain[:8]...)}.Bytes())
	if resp[0] != CmdAuthenticate|0x80 {
		return nil, resp
	}
	h.block, _ = aes.NewCipher(h.keys.ENC[:])
	h.counter = 1
	return h, nil
}

// wrap encrypts an inner frame into a session message.
func (h *host) wrap(inner []byte) ([]byte, [16]byte) {
	iv := scp03.IV(h.block, h.counter)
	ct := scp03.Encrypt(h.block, iv, scp03.Pad(inner))
	h.chain = scp03.MAC(h.keys.MAC[:], h.chain[:], CmdSessionMessage, h.sid, ct)
	return scp03.Frame{Cmd: CmdSessionMessage, Payload: append(append([]byte{h.sid}, ct...), h.chain[:8]...)}.Bytes(), iv
}

// do sends an inner command and returns the inner response, or the outer
// response if the device refused the frame.
func (h *host) do(cmd byte, payload []byte) []byte {
	h.t.Helper()
	resp, _ := h.doStages(cmd, payload)
	return resp
}

// doStages is do that also returns the modeled stages the command cost.
func (h *host) doStages(cmd byte, payload []byte) ([]byte, []signertrace.StageInfo) {
	h.t.Helper()
	frame, iv := h.wrap(scp03.Frame{Cmd: cmd, Payload: payload}.Bytes())
	resp, stages, err := h.d.Handle(context.Background(), frame)
	if err != nil {
		h.t.Fatalf("Handle(%x): %v", frame, err)
	}
	return h.unwrap(resp, iv), stages
}

// unwrap checks and decrypts a session response to the command sent
// under iv.
func (h *host) unwrap(resp []byte, iv [16]byte) []byte {
	h.t.Helper()
	f, err := scp03.ParseFrame(resp)
	if err != nil || f.Cmd != CmdSessionMessage|0x80 {
		return resp
	}
	ct := f.Payload[1 : len(f.Payload)-8]
	mac := scp03.MAC(h.keys.RMAC[:], h.chain[:], CmdSessionMessage|0x80, h.sid, ct)
	if !bytes.Equal(mac[:8], f.Payload[len(f.Payload)-8:]) {
		h.t.Fatalf("bad R-MAC")
	}
	h.counter++
	pt, err := scp03.Decrypt(h.block, iv, ct)
	if err != nil {
		h.t.Fatal(err)
	}
	inner, err := scp03.Unpad(pt)
	if err != nil {
		h.t.Fatal(err)
	}
	return inner
}

func keyTemplate(id uint16, label string, domains uint16, caps uint64, alg byte) []byte {
	p := binary.BigEndian.AppendUint16(nil, id)
	var l [40]byte
	copy(l[:], label)
	p = append(p, l[:]...)
	p = binary.BigEndian.AppendUint16(p, domains)
	p = binary.BigEndian.AppendUint64(p, caps)
	return append(p, alg)
}

func isErr(b []byte, code yubihsm.ErrorCode) bool {
	return bytes.Equal(b, []byte{CmdError, 0, 1, byte(code)})
}

func TestSessionsAndCommands(t *testing.T) {
	clock := simtime.NewManual(time.Unix(1000, 0))
	d := New(Config{Clock: clock})
	h, bad := newHost(t, d, 1, "password")
	if h == nil {
		t.Fatalf("session: %x", bad)
	}
	// Generate, then generate again under the same id: OBJECT EXISTS.
	resp := h.do(CmdGenerateAsymKey, keyTemplate(0x0102, "k", 1, CapSignEdDSA, AlgEd25519))
	if !bytes.Equal(resp, []byte{0xc6, 0, 2, 1, 2}) {
		t.Fatalf("generate: %x", resp)
	}
	if resp := h.do(CmdGenerateAsymKey, keyTemplate(0x0102, "k", 1, CapSignEdDSA, AlgEd25519)); !isErr(resp, yubihsm.CodeObjectExists) {
		t.Fatalf("generate over an existing id: %x", resp)
	}
	pub := h.do(CmdGetPublicKey, []byte{1, 2})
	if len(pub) != 3+1+32 || pub[3] != AlgEd25519 {
		t.Fatalf("get public key: %x", pub)
	}
	msg := []byte("vote")
	sig := h.do(CmdSignEdDSA, append([]byte{1, 2}, msg...))
	if len(sig) != 3+64 || !ed25519.Verify(ed25519.PublicKey(pub[4:]), msg, sig[3:]) {
		t.Fatalf("sign: %x", sig)
	}
	// Capability checks: the key cannot sign ECDSA, nor a key without
	// sign-eddsa sign EdDSA.
	if resp := h.do(CmdSignECDSA, append([]byte{1, 2}, make([]byte, 32)...)); !isErr(resp, yubihsm.CodeInvalidCommand) {
		t.Fatalf("ECDSA with an Ed25519 key: %x", resp)
	}
	h.do(CmdGenerateAsymKey, keyTemplate(0x0103, "nosign", 1, 0, AlgEd25519))
	if resp := h.do(CmdSignEdDSA, []byte{1, 3, 'x'}); !isErr(resp, yubihsm.CodeInsufficientPermissions) {
		t.Fatalf("sign without the capability: %x", resp)
	}
	if resp := h.do(CmdListObjects, []byte{2, TypeAsymmetric}); !bytes.Equal(resp, []byte{0xc8, 0, 8, 1, 2, 3, 0, 1, 3, 3, 0}) {
		t.Fatalf("list: %x", resp)
	}
	if resp := h.do(CmdDeleteObject, []byte{1, 3, TypeAsymmetric}); !bytes.Equal(resp, []byte{0xd8, 0, 0}) {
		t.Fatalf("delete: %x", resp)
	}
	if resp := h.do(CmdDeleteObject, []byte{1, 3, TypeAsymmetric}); !isErr(resp, yubihsm.CodeObjectNotFound) {
		t.Fatalf("delete twice: %x", resp)
	}
	// An auth key that may only sign cannot generate.
	d.AddAuthKey(2, "signer", []byte("pw2"), CapSignEdDSA, 0, 1)
	h2, bad := newHost(t, d, 2, "pw2")
	if h2 == nil {
		t.Fatalf("session 2: %x", bad)
	}
	if resp := h2.do(CmdGenerateAsymKey, keyTemplate(0, "x", 1, CapSignEdDSA, AlgEd25519)); !isErr(resp, yubihsm.CodeInsufficientPermissions) {
		t.Fatalf("generate without the capability: %x", resp)
	}
	if resp := h2.do(CmdSignEdDSA, append([]byte{1, 2}, msg...)); len(resp) != 67 || !ed25519.Verify(ed25519.PublicKey(pub[4:]), msg, resp[3:]) {
		t.Fatalf("sign on session 2: %x", resp)
	}
	// Close Session frees the slot.
	open := d.OpenSessions()
	if resp := h2.do(CmdCloseSession, nil); !bytes.Equal(resp, []byte{0xc0, 0, 0}) {
		t.Fatalf("close: %x", resp)
	}
	if d.OpenSessions() != open-1 {
		t.Fatalf("close left %d sessions, had %d", d.OpenSessions(), open)
	}
	// Idle expiry on the device's clock.
	clock.Advance(IdleTimeout - time.Second)
	if resp := h.do(CmdEcho, []byte("x")); !bytes.Equal(resp, []byte{0x81, 0, 1, 'x'}) {
		t.Fatalf("echo before expiry: %x", resp)
	}
	clock.Advance(IdleTimeout + time.Second)
	if resp := h.do(CmdEcho, []byte("x")); !isErr(resp, yubihsm.CodeInvalidSession) {
		t.Fatalf("echo after expiry: %x", resp)
	}
	// Wrong password: the card cryptogram does not match, and a forged
	// authenticate is refused.
	if h, _ := newHost(t, d, 1, "wrong"); h != nil {
		t.Fatal("authenticated with a wrong password")
	}
	// Unknown auth key.
	if _, resp := newHost(t, d, 99, "password"); !isErr(resp, yubihsm.CodeObjectNotFound) {
		t.Fatalf("unknown auth key: %x", resp)
	}
}

func TestSessionsFull(t *testing.T) {
	d := New(Config{})
	var hosts []*host
	for i := range Sessions {
		h, bad := newHost(t, d, 1, "password")
		if h == nil {
			t.Fatalf("session %d: %x", i, bad)
		}
		hosts = append(hosts, h)
	}
	if _, resp := newHost(t, d, 1, "password"); !isErr(resp, yubihsm.CodeSessionsFull) {
		t.Fatalf("17th session: %x", resp)
	}
	hosts[5].do(CmdCloseSession, nil)
	if h, bad := newHost(t, d, 1, "password"); h == nil || h.sid != 5 {
		t.Fatalf("session after a close: %x", bad)
	}
}

func TestPlainCommands(t *testing.T) {
	d := New(Config{Serial: 7})
	if resp := handle(t, d, []byte{CmdEcho, 0, 2, 'h', 'i'}); !bytes.Equal(resp, []byte{0x81, 0, 2, 'h', 'i'}) {
		t.Fatalf("echo: %x", resp)
	}
	resp := handle(t, d, []byte{CmdDeviceInfo, 0, 0})
	if resp[0] != 0x86 || binary.BigEndian.Uint32(resp[6:10]) != 7 {
		t.Fatalf("device info: %x", resp)
	}
	if resp := handle(t, d, []byte{CmdSignEdDSA, 0, 0}); !isErr(resp, yubihsm.CodeInvalidCommand) {
		t.Fatalf("sign outside a session: %x", resp)
	}
	if resp := handle(t, d, []byte{CmdEcho, 0, 5, 'h'}); !isErr(resp, yubihsm.CodeWrongLength) {
		t.Fatalf("bad length field: %x", resp)
	}
	if resp := handle(t, d, []byte{CmdSessionMessage, 0, 25, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}); !isErr(resp, yubihsm.CodeInvalidSession) {
		t.Fatalf("message on no session: %x", resp)
	}
}

func TestLatencyProfile(t *testing.T) {
	p := YubiHSM2
	for _, c := range []struct {
		n    int
		want time.Duration
	}{{32, 105 * time.Millisecond}, {64, 121 * time.Millisecond}, {108, 132 * time.Millisecond}, {128, 137 * time.Millisecond}, {1024, 353 * time.Millisecond}} {
		if got := p.EdDSATime(c.n); got != c.want {
			t.Errorf("EdDSATime(%d) = %v, want %v", c.n, got, c.want)
		}
	}
	if p.EdDSATime(0) <= 0 || p.EdDSATime(2048) <= p.EdDSATime(1024) {
		t.Error("extrapolation is off")
	}
	// A sign reports its modeled device time, accounted, with the profile.
	d := New(Config{})
	h, _ := newHost(t, d, 1, "password")
	h.do(CmdGenerateAsymKey, keyTemplate(9, "k", 1, CapSignEdDSA, AlgEd25519))
	pub := h.do(CmdGetPublicKey, []byte{0, 9})
	msg := make([]byte, 108)
	sig, stages := h.doStages(CmdSignEdDSA, append([]byte{0, 9}, msg...))
	if len(stages) != 1 || stages[0].Stage != signertrace.StageDevice || stages[0].Duration != 132*time.Millisecond || stages[0].Slept || stages[0].Profile != p.Name {
		t.Fatalf("stages %+v", stages)
	}
	if len(pub) != 36 || len(sig) != 67 || !ed25519.Verify(ed25519.PublicKey(pub[4:]), msg, sig[3:]) {
		t.Fatalf("sign: %x", sig)
	}
}

func TestConnectorHTTP(t *testing.T) {
	d := New(Config{})
	srv := httptest.NewServer(d.Handler())
	defer srv.Close()
	post := func(body []byte) *http.Response {
		resp, err := http.Post(srv.URL+"/connector/api", "application/octet-stream", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	resp := post([]byte{CmdEcho, 0, 1, 'x'})
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/octet-stream" || !bytes.Equal(body, []byte{0x81, 0, 1, 'x'}) || resp.Header.Get("X-Request-ID") == "" {
		t.Fatalf("echo: %d %x %v", resp.StatusCode, body, resp.Header)
	}
	for _, n := range []int{0, 2, scp03.MaxFrame + 1} {
		if resp := post(make([]byte, n)); resp.StatusCode != 400 {
			t.Errorf("%d-byte body: HTTP %d, want 400", n, resp.StatusCode)
		} else {
			resp.Body.Close()
		}
	}
	resp, _ = http.Get(srv.URL + "/connector/api")
	resp.Body.Close()
	if resp.StatusCode != 405 || resp.Header.Get("Allow") != "POST" {
		t.Errorf("GET api: %d", resp.StatusCode)
	}
	resp, _ = http.Get(srv.URL + "/connector/status")
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.HasPrefix(string(body), "status=OK\nserial=0012345678\nversion=") {
		t.Errorf("status: %q", body)
	}
	d.Inject(FaultUnplugged, 0)
	if resp := post([]byte{CmdEcho, 0, 1, 'x'}); resp.StatusCode != 500 {
		t.Errorf("unplugged: HTTP %d, want 500", resp.StatusCode)
	} else {
		resp.Body.Close()
	}
	resp, _ = http.Get(srv.URL + "/connector/status")
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.HasPrefix(string(body), "status=NO_DEVICE\nserial=*\n") {
		t.Errorf("unplugged status: %q", body)
	}
	http.DefaultClient.CloseIdleConnections()
}

// FuzzDevice sends arbitrary plain frames, and arbitrary inner commands
// inside an authenticated session: the device must answer every one with
// a well-formed frame and never panic.
func FuzzDevice(f *testing.F) {
	f.Add([]byte{CmdEcho, 0, 1, 'x'}, []byte{CmdEcho, 0, 1, 'x'})
	f.Add([]byte{CmdCreateSession, 0, 10, 0, 1, 1, 2, 3, 4, 5, 6, 7, 8}, []byte{CmdListObjects, 0, 3, 2, 3, 6})
	f.Add([]byte{CmdSessionMessage, 0, 0}, keyTemplate(0, "x", 1, CapSignEdDSA, AlgP256))
	f.Add([]byte{CmdDeviceInfo, 0, 0}, append([]byte{CmdGenerateAsymKey, 0, 53}, keyTemplate(7, "x", 1, CapSignEdDSA, AlgEd25519)...))
	f.Add([]byte{CmdAuthenticate, 0, 17, 0}, []byte{CmdSignEdDSA, 0, 3, 0, 7, 'm'})
	f.Add([]byte{0xff}, []byte{CmdDeleteObject, 0, 3, 0, 7, 3})
	f.Add([]byte{}, []byte{CmdGetObjectInfo, 0, 3, 0, 1, 2})
	f.Add([]byte{}, append([]byte{CmdPutAsymmetricKey, 0, 85}, append(keyTemplate(0, "p", 1, CapSignECDSA, AlgP256), bytes.Repeat([]byte{0xff}, 32)...)...))
	f.Add([]byte{CmdDeviceInfo, 0, 1, 1}, []byte{CmdGetLogEntries, 0, 0})
	f.Add([]byte{CmdDeviceInfo, 0, 1, 0}, []byte{CmdSetLogIndex, 0, 2, 0, 2})
	f.Add([]byte{}, []byte{CmdSetOption, 0, 4, OptionForceAudit, 0, 1, 1})
	f.Add([]byte{}, []byte{CmdSetOption, 0, 7, OptionAlgorithmToggle, 0, 4, AlgEd25519, 0, AlgP256, 2})
	f.Add([]byte{}, []byte{CmdGetOption, 0, 1, OptionCommandAudit})
	f.Fuzz(func(t *testing.T, plain, inner []byte) {
		d := New(Config{})
		check := func(resp []byte) {
			fr, err := scp03.ParseFrame(resp)
			if err != nil || (fr.Cmd != CmdError && fr.Cmd&0x80 == 0) || (fr.Cmd == CmdError && len(fr.Payload) != 1) {
				t.Fatalf("malformed answer %x", resp)
			}
		}
		check(handle(t, d, plain))
		h, bad := newHost(t, d, 1, "password")
		if h == nil {
			t.Fatalf("no session after %x: %x", plain, bad)
		}
		frame, _ := h.wrap(inner)
		check(handle(t, d, frame))
	})
}

// TestServerShutdown takes the connector down with Shutdown and brings it
// back on the same address with Up.
func TestServerShutdown(t *testing.T) {
	s, err := NewServer(New(Config{}))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	defer http.DefaultClient.CloseIdleConnections()
	status := func() error {
		resp, err := http.Get(s.URL() + "/connector/status")
		if err == nil {
			resp.Body.Close()
		}
		return err
	}
	if err := status(); err != nil {
		t.Fatal(err)
	}
	url := s.URL()
	if err := s.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := status(); err == nil {
		t.Fatal("the connector answered after Shutdown")
	}
	if err := s.Shutdown(context.Background()); err != nil {
		t.Errorf("second Shutdown: %v", err)
	}
	if err := s.Up(); err != nil {
		t.Fatal(err)
	}
	if err := status(); err != nil || s.URL() != url {
		t.Fatalf("after Up: %v at %s, want an answer at %s", err, s.URL(), url)
	}
}
