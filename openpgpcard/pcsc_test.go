//go:build cgo && linux

package openpgpcard_test

import (
	"bufio"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/signerkit/signerkit/openpgpcard"
	"github.com/signerkit/signerkit/openpgpcard/cardsim"
	"github.com/signerkit/signerkit/pkcs11"
	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/signer/signertest"
)

// pcscPIN is both PINs of the card the PC/SC tests use, so that GnuPG's
// loopback PIN entry, which does not say which PIN it asks for, can answer
// every request with it.
const pcscPIN = "12345678"

// TestPCSC runs the real PC/SC stack against the simulated card served
// through vpcd: GnuPG (scdaemon) reads it, generates keys on it and signs
// with it; OpenSC's pkcs11-tool signs through its OpenPGP driver; and this
// package's backend signs through pcsc-lite. Every signature is verified
// by gpg --verify or the standard library.
func TestPCSC(t *testing.T) {
	// Every algorithm, no modeled time, and a YubiKey's GET VERSION for
	// ykman.
	p := cardsim.Instant
	p.Firmware = cardsim.YubiKey4.Firmware
	card := cardsim.New(cardsim.Config{Profile: p, PW1: pcscPIN, PW3: pcscPIN, Serial: 0x53490031})
	r := startReader(t, card)
	g := newGnuPG(t)
	t.Run("gpg-card-status", func(t *testing.T) {
		out := g.run(t, nil, "--card-status")
		for _, want := range []string{"Application type .: OpenPGP", "Version ..........: 3.4", "Serial number ....: 53490031", "PIN retry counter : 3 0 3"} {
			if !strings.Contains(out, want) {
				t.Errorf("gpg --card-status lacks %q:\n%s", want, out)
			}
		}
	})
	t.Run("gpg-generate-sign-verify", func(t *testing.T) {
		g.cardEdit(t, []string{"admin", "generate", "quit"}, map[string]string{
			"cardedit.genkeys.backup_enc": "n", "cardedit.genkeys.replace_keys": "y",
			"keygen.valid": "0", "keygen.name": "Card Holder", "keygen.email": "card@example.com", "keygen.comment": "",
		})
		msg := filepath.Join(g.home, "msg.txt")
		if err := os.WriteFile(msg, []byte("signed on a simulated OpenPGP card\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		before := signatureCounter(t, g.run(t, nil, "--card-status"))
		sig := msg + ".sig"
		g.run(t, nil, "--pinentry-mode", "loopback", "--passphrase", pcscPIN, "--local-user", "card@example.com", "--output", sig, "--detach-sign", msg)
		out := g.run(t, nil, "--verify", sig, msg)
		if !strings.Contains(out, `Good signature from "Card Holder <card@example.com>"`) {
			t.Fatalf("gpg --verify:\n%s", out)
		}
		if after := signatureCounter(t, g.run(t, nil, "--card-status")); after != before+1 {
			t.Errorf("signature counter %d after one sign, was %d", after, before)
		}
	})
	t.Run("gpg-keytocard-sign-verify", func(t *testing.T) { gpgKeyToCard(t, g) })
	g.stop(t) // scdaemon keeps the card, and sees a reset as a removal: let the others have it
	t.Run("ykman-openpgp-info", func(t *testing.T) {
		need(t, "ykman (yubikey-manager)", lookPath("ykman"))
		out, err := exec.Command("ykman", "--reader", r.name, "openpgp", "info").CombinedOutput()
		if err != nil || !strings.Contains(string(out), "OpenPGP version: 3.4") || !strings.Contains(string(out), "PIN tries remaining: 3") {
			t.Fatalf("ykman openpgp info (after gpg generated keys): %v\n%s", err, out)
		}
	})
	t.Run("pkcs11-tool", func(t *testing.T) { pkcs11ToolSign(t, r) })
	t.Run("pkcs11-backend", pkcs11Backend)
	t.Run("openpgpcard-over-pcsc", func(t *testing.T) { backendOverPCSC(t, r) })
}

// gpgKeyToCard makes an RSA key in GnuPG's keyring and moves it to the
// card's signature slot with keytocard (PUT DATA's key import, chained or
// extended as scdaemon chooses); the keyring then holds only a stub, so
// the signature gpg --verify accepts is the card's, and the card's
// signature counter shows it.
func gpgKeyToCard(t *testing.T, g *gnupg) {
	g.run(t, nil, "--pinentry-mode", "loopback", "--passphrase", "", "--quick-gen-key", "Imported Key <imported@example.com>", "rsa2048", "sign", "0")
	g.edit(t, []string{"--edit-key", "imported@example.com"}, "keyedit.prompt", []string{"keytocard", "save"}, map[string]string{
		"keyedit.keytocard.use_primary": "y", "cardedit.genkeys.storekeytype": "1", "cardedit.genkeys.replace_key": "y",
	})
	if out := g.run(t, nil, "--list-secret-keys", "imported@example.com"); !strings.Contains(out, "sec>") {
		t.Fatalf("after keytocard the secret key is not on the card:\n%s", out)
	}
	msg := filepath.Join(g.home, "imported.txt")
	if err := os.WriteFile(msg, []byte("signed with a key imported onto a simulated card\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	before := signatureCounter(t, g.run(t, nil, "--card-status"))
	g.run(t, nil, "--pinentry-mode", "loopback", "--passphrase", pcscPIN, "--local-user", "imported@example.com", "--output", msg+".sig", "--detach-sign", msg)
	if out := g.run(t, nil, "--verify", msg+".sig", msg); !strings.Contains(out, `Good signature from "Imported Key <imported@example.com>"`) {
		t.Fatalf("gpg --verify:\n%s", out)
	}
	if after := signatureCounter(t, g.run(t, nil, "--card-status")); after != before+1 {
		t.Errorf("signature counter %d after one sign with the imported key, was %d", after, before)
	}
}

// backendOverPCSC signs with the key GnuPG generated, then generates an
// Ed25519 key in the authentication slot and runs the conformance suite
// on it, all through pcsc-lite.
func backendOverPCSC(t *testing.T, r *reader) {
	cfg := openpgpcard.Config{Reader: "Virtual PCD", PIN: signer.SecretBytes([]byte(pcscPIN)), AdminPIN: signer.SecretBytes([]byte(pcscPIN))}
	s, err := openpgpcard.Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if s.Attributes() != openpgpcard.AttrRSA2048 {
		t.Errorf("gpg's signature key is %v, want rsa2048", s.Attributes())
	}
	signAndVerify(t, s, []byte("over PC/SC"))
	// The card pulled in the middle of a command: that command fails as
	// disconnected, and once the card is back the Signer signs again.
	r.card.Inject(cardsim.FaultRemove)
	if _, err := s.SignContext(context.Background(), []byte("pulled")); !errors.Is(err, signer.ErrDisconnected) && !errors.Is(err, signer.ErrDeviceNotFound) {
		t.Fatalf("card pulled mid-command over PC/SC: %v, want ErrDisconnected", err)
	}
	r.waitCard(t)
	signAndVerify(t, s, []byte("back in the reader"))
	s.Close()
	if _, err := openpgpcard.Generate(context.Background(), cfg, openpgpcard.KeyAuth, openpgpcard.AttrEd25519); err != nil {
		t.Fatal(err)
	}
	cfg.Key = openpgpcard.KeyAuth
	signertest.Run(t, func() (signer.Signer, error) {
		return openpgpcard.Open(context.Background(), cfg)
	}, signertest.Options{MaxMessage: openpgpcard.MaxEdDSAMessage, Hang: r.card.Hang, Timeout: 20 * time.Second, Concurrency: 2})
	// A P-256 key made here, imported over PC/SC: the card's signature
	// verifies under the key's own public key.
	ec, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if _, err := openpgpcard.Import(context.Background(), cfg, openpgpcard.KeyAuth, ec); err != nil {
		t.Fatal(err)
	}
	s, err = openpgpcard.Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	msg := []byte("imported over PC/SC")
	sig, err := s.SignContext(context.Background(), msg)
	if err != nil {
		t.Fatal(err)
	}
	if err := signertest.VerifyStd(signer.ECDSAP256, ec.Public(), msg, sig); err != nil {
		t.Fatal(err)
	}
}

// pkcs11ToolSign signs with OpenSC's pkcs11-tool through its OpenPGP
// driver and verifies the signature with the key the backend reads.
func pkcs11ToolSign(t *testing.T, r *reader) {
	mods, _ := filepath.Glob("/usr/lib/*/opensc-pkcs11.so")
	need(t, "pkcs11-tool and opensc-pkcs11.so (opensc)", lookPath("pkcs11-tool") && len(mods) > 0)
	dir := t.TempDir()
	msg, sig := filepath.Join(dir, "msg"), filepath.Join(dir, "sig")
	if err := os.WriteFile(msg, []byte("signed through OpenSC"), 0o600); err != nil {
		t.Fatal(err)
	}
	// OpenSC makes a slot per PIN: the signature key is under PW1 in its
	// signing mode, "User PIN (sig)", the second.
	out, err := exec.Command("pkcs11-tool", "--module", mods[0], "--slot-index", "1", "--list-objects", "--type", "pubkey").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "Public Key Object") {
		t.Fatalf("pkcs11-tool --list-objects: %v\n%s", err, out)
	}
	out, err = exec.Command("pkcs11-tool", "--module", mods[0], "--slot-index", "1", "--login", "--pin", pcscPIN, "--sign", "--mechanism", "SHA256-RSA-PKCS",
		"--id", "01", "--input-file", msg, "--output-file", sig).CombinedOutput()
	if err != nil {
		t.Fatalf("pkcs11-tool --sign: %v\n%s", err, out)
	}
	s, err := openpgpcard.Open(context.Background(), openpgpcard.Config{Reader: "Virtual PCD"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got, _ := os.ReadFile(sig)
	d := sha256.Sum256([]byte("signed through OpenSC"))
	if err := rsa.VerifyPKCS1v15(s.Public().(*rsa.PublicKey), crypto.SHA256, d[:], got); err != nil {
		t.Fatalf("pkcs11-tool's signature does not verify: %v", err)
	}
}

// signatureCounter reads gpg --card-status's signature counter.
func signatureCounter(t *testing.T, status string) int {
	t.Helper()
	_, rest, ok := strings.Cut(status, "Signature counter : ")
	n, err := strconv.Atoi(strings.Fields(rest + " x")[0])
	if !ok || err != nil {
		t.Fatalf("no signature counter in gpg --card-status:\n%s", status)
	}
	return n
}

// pkcs11Backend opens the card's signature key with this module's pkcs11
// backend through OpenSC's module, and signs.
func pkcs11Backend(t *testing.T) {
	mods, _ := filepath.Glob("/usr/lib/*/opensc-pkcs11.so")
	need(t, "opensc-pkcs11.so (opensc)", len(mods) > 0)
	s, err := pkcs11.Open(context.Background(), pkcs11.Config{
		Module: mods[0], TokenLabel: "OpenPGP card (User PIN (sig))", PoolSize: 1,
		Key: signer.KeyRef{Label: "Signature key"}, Secret: signer.SecretBytes([]byte(pcscPIN)),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	msg := []byte("through the pkcs11 backend and OpenSC")
	sig, err := s.SignContext(context.Background(), msg)
	if err != nil {
		t.Fatal(err)
	}
	d := sha256.Sum256(msg)
	if err := rsa.VerifyPKCS1v15(s.Public().(*rsa.PublicKey), crypto.SHA256, d[:], sig); err != nil {
		t.Fatalf("does not verify: %v", err)
	}
}

// gnupg is a GnuPG home of its own whose scdaemon reaches cards through
// PC/SC only, sharing them.
type gnupg struct {
	home string
	env  []string
}

func newGnuPG(t *testing.T) *gnupg {
	t.Helper()
	_, err := os.Stat("/usr/lib/gnupg/scdaemon")
	need(t, "gpg and scdaemon", lookPath("gpg") && err == nil)
	home, err := os.MkdirTemp("", "sk-gpg") // short: the agent's socket path has a limit
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(home) })
	os.Chmod(home, 0o700)
	os.WriteFile(filepath.Join(home, "scdaemon.conf"), []byte("disable-ccid\npcsc-shared\n"), 0o600)
	os.WriteFile(filepath.Join(home, "gpg-agent.conf"), []byte("allow-loopback-pinentry\n"), 0o600)
	g := &gnupg{home: home, env: append(os.Environ(), "GNUPGHOME="+home)}
	t.Cleanup(func() { g.stop(t) })
	return g
}

func (g *gnupg) stop(t *testing.T) {
	cmd := exec.Command("gpgconf", "--kill", "all")
	cmd.Env = g.env
	cmd.Run()
}

// run runs gpg in batch mode and returns its combined output.
func (g *gnupg) run(t *testing.T, stdin io.Reader, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "gpg", append([]string{"--batch", "--no-tty"}, args...)...)
	cmd.Env, cmd.Stdin = g.env, stdin
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("gpg %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// cardEdit drives gpg --card-edit through its status and command file
// descriptors: each cardedit.prompt takes the next of commands, each other
// question its answer from answers, and every PIN request pcscPIN.
func (g *gnupg) cardEdit(t *testing.T, commands []string, answers map[string]string) {
	t.Helper()
	g.edit(t, []string{"--card-edit"}, "cardedit.prompt", commands, answers)
}

// edit drives an interactive gpg command (args) as cardEdit does, its
// command prompt named prompt.
func (g *gnupg) edit(t *testing.T, args []string, prompt string, commands []string, answers map[string]string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "gpg", append([]string{"--no-tty", "--command-fd", "0", "--status-fd", "1", "--pinentry-mode", "loopback"}, args...)...)
	cmd.Env = g.env
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	var errOut strings.Builder
	cmd.Stderr = &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var seen []string
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 3 || f[0] != "[GNUPG:]" || !strings.HasPrefix(f[1], "GET_") {
			continue
		}
		seen = append(seen, f[2])
		var reply string
		switch {
		case f[1] == "GET_HIDDEN":
			reply = pcscPIN
		case f[2] == prompt && len(commands) > 0:
			reply, commands = commands[0], commands[1:]
		case f[2] == prompt:
			reply = "quit"
		default:
			var ok bool
			if reply, ok = answers[f[2]]; !ok {
				t.Errorf("gpg %s asks %s %s, which the test does not answer", strings.Join(args, " "), f[1], f[2])
			}
		}
		fmt.Fprintln(in, reply)
	}
	in.Close()
	if err := cmd.Wait(); err != nil || t.Failed() {
		t.Fatalf("gpg %s: %v; questions %v\n%s", strings.Join(args, " "), err, seen, tail(errOut.String(), 3000))
	}
}
