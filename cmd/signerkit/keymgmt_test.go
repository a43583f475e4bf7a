package main

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ed25519"
	"errors"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/signerkit/signerkit/pkcs11/pkcs11test"
	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/yubihsm"
	"github.com/signerkit/signerkit/yubihsm/yubihsmsim"
)

// keyMgmtRun runs signerkit in this process with keysStdin input, and returns its
// output and error.
func keyMgmtRun(t *testing.T, input string, args ...string) (string, error) {
	t.Helper()
	keysStdin = strings.NewReader(input)
	defer func() { keysStdin = os.Stdin }()
	var out bytes.Buffer
	err := run(args, &out, &out)
	return out.String(), err
}

func keyMgmtMustRun(t *testing.T, args ...string) string {
	t.Helper()
	out, err := keyMgmtRun(t, "", args...)
	if err != nil {
		t.Fatalf("signerkit %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

var setupPassword = regexp.MustCompile(`(admin|signer) key ([0-9a-f]{4}) password: +([0-9a-f]{32})`)
var setupWrapKey = regexp.MustCompile(`wrap key [0-9a-f]{4} \(AES-256\): +([0-9a-f]{64})`)

// keyMgmtSimSetup runs yubihsm setup on a new simulated device and returns its
// connector URL and the admin and signer passwords and wrap key printed.
func keyMgmtSimSetup(t *testing.T, extra ...string) (dev *yubihsmsim.Device, url, admin, signerPW, wrap string) {
	t.Helper()
	dev = yubihsmsim.New(yubihsmsim.Config{})
	srv := httptest.NewServer(dev.Handler())
	t.Cleanup(srv.Close)
	out := keyMgmtMustRun(t, append([]string{"yubihsm", "setup", "-connector", srv.URL}, extra...)...)
	pw := map[string]string{}
	for _, m := range setupPassword.FindAllStringSubmatch(out, -1) {
		pw[m[1]] = m[3]
	}
	w := setupWrapKey.FindStringSubmatch(out)
	if pw["admin"] == "" || pw["signer"] == "" || w == nil {
		t.Fatalf("setup printed no secrets:\n%s", out)
	}
	return dev, srv.URL, pw["admin"], pw["signer"], w[1]
}

// TestYubiHSMSetupAndBackup: setup leaves a device with an admin key, a
// sign-only key, a wrap key and command audit on, and no factory key;
// keys generate makes an exportable key there, keys export backs it up,
// keys delete asks first, and keys import restores it, into the same
// device and into a second one set up with the same wrap key; every copy
// signs as the original did (crypto/ed25519 verifies).
func TestYubiHSMSetupAndBackup(t *testing.T) {
	ctx := context.Background()
	dev, url, admin, signerPW, wrap := keyMgmtSimSetup(t)
	if _, err := yubihsm.OpenStore(ctx, yubihsm.Config{Connector: url, Secret: signer.SecretBytes([]byte("password"))}); err == nil {
		t.Fatal("the factory key still opens a session after setup")
	}
	for _, c := range []byte{0x46, 0x58, 0x4a, 0x4b} {
		if dev.CommandAudit(c) != 1 {
			t.Errorf("command audit of %#x is %d, want on", c, dev.CommandAudit(c))
		}
	}
	if dev.CommandAudit(0x6a) != 0 {
		t.Error("Sign EdDSA is audited: the log would fill with votes")
	}
	out, err := keyMgmtRun(t, "", "yubihsm", "setup", "-connector", url)
	if err == nil || !strings.Contains(err.Error(), "set up already") {
		t.Fatalf("second setup: %v\n%s", err, out)
	}

	adminURI := "yubihsm:connector=" + url + ";auth-key=2;label=validator?pin-value=" + admin
	signerURI := "yubihsm:connector=" + url + ";auth-key=3;label=validator?pin-value=" + signerPW
	out = keyMgmtMustRun(t, "keys", "generate", "-to", adminURI, "-exportable")
	if !strings.Contains(out, "public key (hex)") {
		t.Fatalf("keys generate printed:\n%s", out)
	}
	sig := keyMgmtSign(t, signerURI)

	// The sign-only key cannot make keys.
	if out, err := keyMgmtRun(t, "", "keys", "generate", "-to", strings.Replace(signerURI, "label=validator", "label=other", 1)); !errors.Is(err, signer.ErrPermissionDenied) {
		t.Errorf("keys generate with the signer key: %v\n%s", err, out)
	}
	backup := filepath.Join(t.TempDir(), "validator.wrapped")
	keyMgmtMustRun(t, "keys", "export", "-from", adminURI, "-wrap", "id:1", "-out", backup)
	if fi, err := os.Stat(backup); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("backup file: %v, %v", fi, err)
	}
	if _, err := keyMgmtRun(t, "", "keys", "export", "-from", adminURI, "-wrap", "id:1", "-out", backup); err == nil {
		t.Error("export over an existing file")
	}
	// keys delete takes only the key's label as confirmation.
	if out, err := keyMgmtRun(t, "yes\n", "keys", "delete", adminURI); !errors.Is(err, errNotConfirmed) {
		t.Fatalf("delete answered yes: %v\n%s", err, out)
	}
	keyMgmtSign(t, signerURI) // still there
	keyMgmtRunInput(t, "validator\n", "keys", "delete", adminURI)
	if _, err := signer.Open(ctx, signerURI); !errors.Is(err, signer.ErrKeyNotFound) {
		t.Fatalf("key still opens after delete: %v", err)
	}
	keyMgmtMustRun(t, "keys", "import", "-from", backup, "-to", adminURI)
	if again := keyMgmtSign(t, signerURI); !bytes.Equal(again, sig) {
		t.Fatal("the restored key signs differently")
	}

	// A second device restored with the same wrap key takes the backup.
	wrapFile := filepath.Join(t.TempDir(), "wrap")
	if err := os.WriteFile(wrapFile, []byte(wrap+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, url2, admin2, signer2, wrap2 := keyMgmtSimSetup(t, "-wrap-key-source", "file:"+wrapFile)
	if wrap2 != wrap {
		t.Fatalf("setup with -wrap-key-source put wrap key %s, want %s", wrap2, wrap)
	}
	keyMgmtMustRun(t, "keys", "import", "-from", backup, "-to", "yubihsm:connector="+url2+";auth-key=2?pin-value="+admin2)
	if again := keyMgmtSign(t, "yubihsm:connector="+url2+";auth-key=3;label=validator?pin-value="+signer2); !bytes.Equal(again, sig) {
		t.Fatal("the key restored on a second device signs differently")
	}

	// A key made without -exportable does not leave.
	fixedURI := strings.Replace(adminURI, "label=validator", "label=fixed", 1)
	keyMgmtMustRun(t, "keys", "generate", "-to", fixedURI)
	if out, err := keyMgmtRun(t, "", "keys", "export", "-from", fixedURI, "-wrap", "id:1", "-out", backup+"2"); !errors.Is(err, signer.ErrPermissionDenied) || !strings.Contains(err.Error(), "-exportable") {
		t.Errorf("export of a non-exportable key: %v\n%s", err, out)
	}
}

func keyMgmtRunInput(t *testing.T, input string, args ...string) string {
	t.Helper()
	out, err := keyMgmtRun(t, input, args...)
	if err != nil {
		t.Fatalf("signerkit %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// keyMgmtSign signs a fixed message with the key uri names and verifies it
// with crypto/ed25519.
func keyMgmtSign(t *testing.T, uri string) []byte {
	t.Helper()
	ctx := context.Background()
	s, err := signer.Open(ctx, uri)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	msg := []byte("a vote at height 100")
	sig, err := s.SignContext(ctx, msg)
	if err != nil || !ed25519.Verify(s.Public().(ed25519.PublicKey), msg, sig) {
		t.Fatalf("sign: %v", err)
	}
	return sig
}

// TestKeysGenerateStores: keys generate on a real SoftHSM2 token, a
// keybase directory and a key file; -exportable only where a device can
// tell; and the key each made signs.
func TestKeysGenerateStores(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("SK_TEST_PASS", "correct horse")
	uris := []string{
		"keybase:dir=" + filepath.Join(dir, "kb") + ";label=val?pin-source=env:SK_TEST_PASS",
		"inprocess:file=" + filepath.Join(dir, "validator.pem"),
	}
	if why := pkcs11test.Available(); why == "" {
		tok := pkcs11test.New(t)
		t.Setenv("SOFTHSM2_CONF", tok.Conf)
		uris = append(uris, tok.URI("val"))
	} else {
		t.Logf("no SoftHSM2: %s", why)
	}
	for _, uri := range uris {
		out := keyMgmtMustRun(t, "keys", "generate", "-to", uri)
		if !strings.Contains(out, "public key (hex)") {
			t.Errorf("%s: printed\n%s", uri, out)
		}
		keyMgmtSign(t, uri)
		if _, err := keyMgmtRun(t, "", "keys", "generate", "-to", uri); !errors.Is(err, signer.ErrKeyExists) {
			t.Errorf("%s: second generate: %v", uri, err)
		}
	}
	if fi, err := os.Stat(filepath.Join(dir, "validator.pem")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("key file: %v, %v", fi, err)
	}
	if _, err := keyMgmtRun(t, "", "keys", "generate", "-to", "inprocess:file="+filepath.Join(dir, "x.pem"), "-exportable"); err == nil {
		t.Error("-exportable on a key file")
	}
}

// TestYubiHSMSetupUndo: a setup that fails part way (the device refuses
// the wrap key: its algorithm is switched off) deletes the authentication
// keys it made and leaves the factory key, so that it can be run again.
func TestYubiHSMSetupUndo(t *testing.T) {
	ctx := context.Background()
	dev := yubihsmsim.New(yubihsmsim.Config{})
	srv := httptest.NewServer(dev.Handler())
	defer srv.Close()
	factory := yubihsm.Config{Connector: srv.URL, Secret: signer.SecretBytes([]byte("password"))}
	st, err := yubihsm.OpenStore(ctx, factory)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	const algorithmToggle = 0x04
	if err := st.SetOption(ctx, algorithmToggle, []byte{yubihsmsim.AlgAES256CCMWrap, 0}); err != nil {
		t.Fatal(err)
	}
	if out, err := keyMgmtRun(t, "", "yubihsm", "setup", "-connector", srv.URL); err == nil || !strings.Contains(err.Error(), "wrap key") {
		t.Fatalf("setup with the wrap algorithm off: %v\n%s", err, out)
	}
	for _, id := range []uint16{2, 3} {
		if ok, err := st.HasObject(ctx, yubihsm.TypeAuthKey, id); ok || err != nil {
			t.Errorf("authentication key %04x after a failed setup: %v, %v", id, ok, err)
		}
	}
	if err := st.SetOption(ctx, algorithmToggle, []byte{yubihsmsim.AlgAES256CCMWrap, 1}); err != nil {
		t.Fatal(err)
	}
	st.Close()
	keyMgmtMustRun(t, "yubihsm", "setup", "-connector", srv.URL)
}

// TestPKCS11Backup: on a real SoftHSM2 token, keys generate makes a wrap
// key and an exportable P-256 key; keys export, delete -yes and import
// bring it back, and it signs for the same public key (crypto/ecdsa
// verifies, through signer's raw r ‖ s form).
func TestPKCS11Backup(t *testing.T) {
	if why := pkcs11test.Available(); why != "" {
		t.Skip(why)
	}
	tok := pkcs11test.New(t)
	t.Setenv("SOFTHSM2_CONF", tok.Conf)
	ctx := context.Background()
	keyMgmtMustRun(t, "keys", "generate", "-algorithm", "aes-wrap", "-to", tok.URI("backup"))
	uri := tok.URI("val")
	keyMgmtMustRun(t, "keys", "generate", "-algorithm", "p256", "-exportable", "-to", uri)
	pubBefore := keyMgmtPublic(t, uri)
	backup := filepath.Join(t.TempDir(), "val.wrapped")
	keyMgmtMustRun(t, "keys", "export", "-from", uri, "-wrap", "backup", "-out", backup)
	keyMgmtMustRun(t, "keys", "delete", "-yes", uri)
	if _, err := signer.Open(ctx, uri); !errors.Is(err, signer.ErrKeyNotFound) {
		t.Fatalf("open after delete: %v", err)
	}
	keyMgmtMustRun(t, "keys", "import", "-from", backup, "-to", tok.URI(""))
	if !keyMgmtPublic(t, uri).Equal(pubBefore) {
		t.Fatal("the restored key has another public key")
	}
	// Ed25519: SoftHSM2 2.6.1 cannot wrap it; the operator is told so.
	ed := tok.URI("ed")
	keyMgmtMustRun(t, "keys", "generate", "-exportable", "-to", ed)
	if out, err := keyMgmtRun(t, "", "keys", "export", "-from", ed, "-wrap", "backup", "-out", backup+"2"); !errors.Is(err, signer.ErrUnsupported) {
		t.Errorf("Ed25519 export on SoftHSM2: %v\n%s", err, out)
	}
}

// keyMgmtPublic opens the key uri names, signs with it, verifies the signature
// with signer's Verify (crypto/ecdsa or crypto/ed25519 underneath), and
// returns its public key.
func keyMgmtPublic(t *testing.T, uri string) interface {
	Equal(crypto.PublicKey) bool
} {
	t.Helper()
	ctx := context.Background()
	s, err := signer.Open(ctx, uri)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	msg := []byte("a vote")
	sig, err := s.SignContext(ctx, msg)
	if err != nil {
		t.Fatal(err)
	}
	alg, err := signer.AlgorithmOf(s)
	if err != nil {
		t.Fatal(err)
	}
	if err := alg.Verify(s.Public(), msg, sig); err != nil {
		t.Fatal(err)
	}
	return s.Public().(interface{ Equal(crypto.PublicKey) bool })
}

// TestGnokeyHomeScheme: the command knows gnokeyhome: keys (keys show,
// keys list), from gnokey's own home fixture, which is only read.
func TestGnokeyHomeScheme(t *testing.T) {
	home, err := filepath.Abs(filepath.Join("..", "..", "keybase", "gnokeyhome", "testdata", "gnokey-home"))
	if err != nil {
		t.Fatal(err)
	}
	out := keyMgmtMustRun(t, "keys", "show", "gnokeyhome:home="+home+";label=my%20key%2Fed25519%20%E2%9C%93?pin-value=fixture%20passphrase")
	if !strings.Contains(out, "0ebbed0e4277d6055cee087d9a5c70daa0371d06e5855619f45ac89733c0a609") {
		t.Errorf("keys show of a gnokey key:\n%s", out)
	}
	out = keyMgmtMustRun(t, "keys", "list", "gnokeyhome:home="+home)
	if !strings.Contains(out, "g1xqhrd7pxw60fll0dqnf0sdfcz7ywve26psq4jv") {
		t.Errorf("keys list of a gnokey home:\n%s", out)
	}
}

// TestPKCS11BackupOtherToken: two SoftHSM2 tokens given the same wrap key
// (keys generate -algorithm aes-wrap -wrap-key-source) restore each
// other's backups; a token with a wrap key of its own does not.
func TestPKCS11BackupOtherToken(t *testing.T) {
	if why := pkcs11test.Available(); why != "" {
		t.Skip(why)
	}
	tok := pkcs11test.New(t)
	for _, label := range []string{"second", "third"} {
		if out, err := tok.Util("--init-token", "--free", "--label", label, "--pin", tok.PIN, "--so-pin", tok.SOPIN); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
	}
	t.Setenv("SOFTHSM2_CONF", tok.Conf)
	on := func(label, object string) string {
		return strings.Replace(tok.URI(object), "token="+tok.Label, "token="+label, 1)
	}
	wrapFile := filepath.Join(t.TempDir(), "wrap.hex")
	if err := os.WriteFile(wrapFile, []byte(strings.Repeat("5a", 32)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, label := range []string{tok.Label, "second"} {
		out := keyMgmtMustRun(t, "keys", "generate", "-algorithm", "aes-wrap", "-wrap-key-source", "file:"+wrapFile, "-to", on(label, "backup"))
		if !strings.Contains(out, "AES-256") {
			t.Errorf("put wrap key printed:\n%s", out)
		}
	}
	keyMgmtMustRun(t, "keys", "generate", "-algorithm", "aes-wrap", "-to", on("third", "backup"))
	uri := on(tok.Label, "val")
	keyMgmtMustRun(t, "keys", "generate", "-algorithm", "p384", "-exportable", "-to", uri)
	pub := keyMgmtPublic(t, uri)
	backup := filepath.Join(t.TempDir(), "val.wrapped")
	keyMgmtMustRun(t, "keys", "export", "-from", uri, "-wrap", "backup", "-out", backup)
	if out, err := keyMgmtRun(t, "", "keys", "import", "-from", backup, "-to", on("third", "")); !errors.Is(err, signer.ErrInvalidKey) {
		t.Errorf("import under another wrap key: %v\n%s", err, out)
	}
	keyMgmtMustRun(t, "keys", "import", "-from", backup, "-to", on("second", ""))
	if !keyMgmtPublic(t, on("second", "val")).Equal(pub) {
		t.Fatal("the key restored on the second token has another public key")
	}
	if _, err := keyMgmtRun(t, "", "keys", "generate", "-wrap-key-source", "file:"+wrapFile, "-to", on("third", "x")); err == nil {
		t.Error("-wrap-key-source without -algorithm aes-wrap")
	}
}
