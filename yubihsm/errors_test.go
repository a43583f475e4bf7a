package yubihsm_test

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/yubihsm"
	"github.com/signerkit/signerkit/yubihsm/yubihsmsim"
)

// TestErrorPrefixOnce provokes every error path it can reach against the
// simulator — wrong passwords, unknown keys, device error codes, faults,
// a connector down, closed signers, cancelled contexts, bad arguments —
// and checks that each error wraps what it should and says "yubihsm:"
// once, at its start.
func TestErrorPrefixOnce(t *testing.T) {
	dev := yubihsmsim.New(yubihsmsim.Config{})
	srv, err := yubihsmsim.NewServer(dev)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	url := srv.URL()
	ctx := context.Background()
	st := openStore(t, config(url))
	ed := generate(t, st, signer.Ed25519, "errors-ed25519")
	p256 := generate(t, st, signer.ECDSAP256, "errors-p256")
	k := openSigner(t, st, ed.Ref())
	kp := openSigner(t, st, p256.Ref())
	dev.AddAuthKey(2, "signer", []byte("signing only"), yubihsmsim.CapSignEdDSA, 0, 0xffff)
	signOnly := openStore(t, yubihsm.Config{Connector: url, AuthKeyID: 2, Secret: signer.SecretBytes([]byte("signing only"))})

	check := func(what string, err error, want ...error) {
		t.Helper()
		if err == nil {
			t.Errorf("%s: no error", what)
			return
		}
		msg := err.Error()
		if !strings.HasPrefix(msg, "yubihsm: ") || strings.Count(msg, "yubihsm:") != 1 {
			t.Errorf("%s: %q: want one \"yubihsm:\", at the start", what, msg)
		}
		for _, w := range want {
			if !errors.Is(err, w) {
				t.Errorf("%s: %v does not wrap %v", what, err, w)
			}
		}
	}
	sign := func(s signer.Signer) error {
		_, err := s.SignContext(ctx, []byte("a vote"))
		return err
	}
	withConfig := func(f func(*yubihsm.Config)) yubihsm.Config {
		c := config(url)
		f(&c)
		return c
	}
	openErr := func(cfg yubihsm.Config) error {
		_, err := yubihsm.OpenStore(ctx, cfg)
		return err
	}
	keyErr := func(cfg yubihsm.Config) error {
		_, err := yubihsm.Open(ctx, cfg)
		return err
	}

	// Configuration and arguments.
	check("no secret", openErr(withConfig(func(c *yubihsm.Config) { c.Secret = nil })), signer.ErrInvalidArgument)
	check("failing secret", openErr(withConfig(func(c *yubihsm.Config) { c.Secret = signer.SecretEnv("YUBIHSM_TEST_UNSET") })), signer.ErrInvalidArgument)
	check("bad connector", openErr(withConfig(func(c *yubihsm.Config) { c.Connector = "ftp://x" })), signer.ErrInvalidArgument)
	check("no key", keyErr(config(url)), signer.ErrInvalidArgument)
	check("bad key id", keyErr(withConfig(func(c *yubihsm.Config) { c.Key.ID = "xyz" })), signer.ErrInvalidArgument)
	check("bad label", keyErr(withConfig(func(c *yubihsm.Config) { c.Key.Label = strings.Repeat("x", 41) })), signer.ErrInvalidArgument)
	_, err = st.GenerateKey(ctx, signer.BLS12381MinPK, "bls")
	check("generate BLS", err, signer.ErrUnsupported)
	_, err = st.GenerateKey(ctx, signer.Ed25519, ed.Label)
	check("generate a taken label", err, signer.ErrKeyExists)
	_, err = st.ImportKey(ctx, ed25519.PrivateKey(make([]byte, 5)), signer.Ed25519, "short")
	check("import a short key", err, signer.ErrInvalidKey)
	p521, _ := ecdsa.GenerateKey(elliptic.P521(), rand.Reader)
	_, err = st.ImportKey(ctx, p521, 0, "p521")
	check("import P-521", err, signer.ErrUnsupported)
	_, err = k.SignContext(ctx, make([]byte, yubihsm.MaxEd25519Message+1))
	check("message too large", err, signer.ErrMessageTooLarge)
	_, err = k.Sign(nil, []byte("msg"), crypto.SHA256)
	check("Ed25519ph", err, signer.ErrUnsupported)

	// URIs, through signer.Open: their errors are *signer.URIError values,
	// which start with the scheme's name.
	for _, uri := range []string{
		"yubihsm:label=k;sessions=2?pin-value=password",
		"yubihsm:id=xyz?pin-value=password",
		"yubihsm:connector=" + url + "?pin-value=password",
		"yubihsm:connector=" + url + ";label=k",
		"yubihsm:label=k?pin-source=env:",
	} {
		_, err := signer.Open(ctx, uri)
		check(uri, err, signer.ErrInvalidArgument)
	}
	_, err = signer.Open(ctx, "yubihsm:connector="+url+";label=absent?pin-value=password")
	check("URI of an absent key", err, signer.ErrKeyNotFound)
	_, err = signer.Open(ctx, "yubihsm:connector="+url+";label=k?pin-source=env:YUBIHSM_TEST_UNSET")
	check("URI with an unset pin-source", err, signer.ErrInvalidArgument)

	// Refusals by the device, and keys it does not have.
	check("wrong password", openErr(withConfig(func(c *yubihsm.Config) { c.Secret = signer.SecretBytes([]byte("wrong")) })), signer.ErrWrongPassphrase)
	err = openErr(withConfig(func(c *yubihsm.Config) { c.AuthKeyID = 9 }))
	check("unknown auth key", err, signer.ErrKeyNotFound)
	if de := new(*yubihsm.DeviceError); !errors.As(err, de) || (*de).Code != yubihsm.CodeObjectNotFound {
		t.Errorf("unknown auth key: %v, want a *DeviceError with OBJECT NOT FOUND", err)
	}
	check("unknown key", keyErr(withConfig(func(c *yubihsm.Config) { c.Key.Label = "absent" })), signer.ErrKeyNotFound)
	_, err = st.OpenKey(ctx, signer.KeyRef{ID: ed.ID, Algorithm: signer.ECDSAP256})
	check("wrong algorithm", err, signer.ErrUnsupported)
	_, err = signOnly.GenerateKey(ctx, signer.Ed25519, "denied")
	check("generate without the capability", err, signer.ErrPermissionDenied)
	check("delete without the capability", signOnly.DeleteKey(ctx, ed.Ref()), signer.ErrPermissionDenied)
	check("delete an absent key", st.DeleteKey(ctx, signer.KeyRef{Label: "absent"}), signer.ErrKeyNotFound)
	_, err = st.PublicKey(ctx, 0x7777)
	check("public key of an absent object", err, signer.ErrKeyNotFound)
	gone := openSigner(t, st, generate(t, st, signer.Ed25519, "deleted").Ref())
	if err := st.DeleteKey(ctx, signer.KeyRef{Label: "deleted"}); err != nil {
		t.Fatal(err)
	}
	check("sign with a deleted key", sign(gone), signer.ErrKeyNotFound)

	// Sessions full: the device refuses a 17th.
	var others []*yubihsm.Store
	for dev.OpenSessions() < yubihsmsim.Sessions {
		o, err := yubihsm.OpenStore(ctx, config(url))
		if err != nil {
			t.Fatal(err)
		}
		others = append(others, o)
	}
	check("open on a full device", openErr(config(url)), signer.ErrBusy)
	full := openSigner(t, st, ed.Ref()) // no session yet
	check("sign on a full device", sign(full), signer.ErrBusy)
	for _, o := range others {
		o.Close()
	}

	// Faults.
	for _, f := range []yubihsmsim.Fault{yubihsmsim.FaultCorruptMAC, yubihsmsim.FaultGarble, yubihsmsim.FaultWrongLength} {
		signOK(t, k, "before a fault")
		dev.Inject(f, 1)
		check("damaged response", sign(k), signer.ErrProtocol)
	}
	dev.Inject(yubihsmsim.FaultUnplugged, 0)
	check("sign, unplugged", sign(k), signer.ErrDisconnected)
	check("open, unplugged", openErr(config(url)), signer.ErrDeviceNotFound)
	_, err = st.DeviceInfo(ctx)
	check("device info, unplugged", err, signer.ErrDisconnected)
	dev.Clear(yubihsmsim.FaultUnplugged)
	release := dev.Hang()
	hctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	_, err = kp.SignContext(hctx, []byte("a vote"))
	cancel()
	release()
	check("sign, hung", err, context.DeadlineExceeded)
	signOK(t, k, "before the connector goes down")
	if err := srv.Down(); err != nil {
		t.Fatal(err)
	}
	check("sign, connector down", sign(k), signer.ErrDisconnected)
	_, err = st.ListKeys(ctx)
	check("list, connector down", err, signer.ErrDisconnected)
	check("open, connector down", openErr(config(url)), signer.ErrDeviceNotFound)
	_, err = st.Status(ctx)
	check("status, connector down", err, signer.ErrDeviceNotFound)
	if err := srv.Up(); err != nil {
		t.Fatal(err)
	}

	// Cancelled contexts and closed signers.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	_, err = k.SignContext(cctx, []byte("a vote"))
	check("sign, cancelled", err, context.Canceled)
	_, err = yubihsm.OpenStore(cctx, config(url))
	check("open, cancelled", err, context.Canceled)
	_, err = st.ListKeys(cctx)
	check("list, cancelled", err, context.Canceled)
	k.Close()
	check("sign, closed", sign(k), signer.ErrClosed)
	_, err = k.Sign(nil, []byte("msg"), crypto.Hash(0))
	check("crypto.Signer sign, closed", err, signer.ErrClosed)
	st.Close()
	_, err = st.OpenKey(ctx, ed.Ref())
	check("open key, store closed", err, signer.ErrClosed)
	_, err = st.GenerateKey(ctx, signer.Ed25519, "after close")
	check("generate, store closed", err, signer.ErrClosed)
}

func TestDeviceErrorUnwraps(t *testing.T) {
	for code, want := range map[yubihsm.ErrorCode]error{
		yubihsm.CodeInvalidSession:          signer.ErrSessionExpired,
		yubihsm.CodeAuthenticationFailed:    signer.ErrWrongPassphrase,
		yubihsm.CodeSessionsFull:            signer.ErrBusy,
		yubihsm.CodeInsufficientPermissions: signer.ErrPermissionDenied,
		yubihsm.CodeObjectNotFound:          signer.ErrKeyNotFound,
		yubihsm.CodeObjectExists:            signer.ErrKeyExists,
		yubihsm.CodeWrongLength:             signer.ErrInvalidMessage,
		yubihsm.CodeInvalidCommand:          signer.ErrUnsupported,
		0x42:                                signer.ErrProtocol,
	} {
		err := error(&yubihsm.DeviceError{Code: code, Command: 0x6a})
		if !errors.Is(err, want) {
			t.Errorf("code 0x%02x: %v does not wrap %v", uint8(code), err, want)
		}
	}
}

func TestErrorCodeString(t *testing.T) {
	for code, want := range map[yubihsm.ErrorCode]string{
		yubihsm.CodeObjectNotFound:           "OBJECT NOT FOUND",
		yubihsm.CodeAuthenticationFailed:     "AUTHENTICATION FAILED",
		yubihsm.CodeSSHCAConstraintViolation: "SSH CA CONSTRAINT VIOLATION",
		0x42:                                 "ErrorCode(0x42)",
	} {
		if got := code.String(); got != want {
			t.Errorf("ErrorCode(0x%02x).String() = %q, want %q", uint8(code), got, want)
		}
	}
	for code, want := range map[yubihsm.ErrorCode]string{
		yubihsm.CodeObjectNotFound: "yubihsm: device refused command 0x6a: OBJECT NOT FOUND (0x0b)",
		0x42:                       "yubihsm: device refused command 0x6a: unknown error code 0x42",
	} {
		if got := (&yubihsm.DeviceError{Code: code, Command: 0x6a}).Error(); got != want {
			t.Errorf("DeviceError 0x%02x: %q, want %q", uint8(code), got, want)
		}
	}
}
