package keybase

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/signer/signertest"
)

var pw = signer.SecretBytes([]byte("correct horse battery staple"))

// testStore returns a store over "keys" in a fresh temporary directory (not
// created until the first key is written), with pw for its secret, at
// testCost.
func testStore(t testing.TB) *Store {
	t.Helper()
	s, err := OpenStore(context.Background(), Config{Dir: filepath.Join(t.TempDir(), "keys"), Secret: pw, Cost: testCost})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// with returns a Store on s's directory and lock, with another secret and
// mode: what OpenStore with them would return.
func (s *Store) with(secret signer.Secret, mode Mode) *Store {
	cfg := s.cfg
	cfg.Secret, cfg.Mode = secret, mode
	return &Store{dir: s.dir, cfg: cfg, sema: s.sema}
}

func secretOf(p string) signer.Secret { return signer.SecretBytes([]byte(p)) }

func TestStoreLifecycle(t *testing.T) {
	ctx := context.Background()
	s := testStore(t)
	ed, err := s.GenerateKey(ctx, signer.Ed25519, "validator")
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(s.Dir()); err != nil || (runtime.GOOS != "windows" && fi.Mode().Perm() != 0o700) {
		t.Fatalf("directory: %v, %v", fi.Mode(), err)
	}
	k1, err := s.GenerateKey(ctx, signer.ECDSASecp256k1, "account.1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.GenerateKey(ctx, signer.Ed25519, "validator"); !errors.Is(err, signer.ErrKeyExists) {
		t.Errorf("second GenerateKey under one name: got %v", err)
	}
	if _, err := s.GenerateKey(ctx, signer.ECDSAP256, "p256"); !errors.Is(err, signer.ErrUnsupported) {
		t.Errorf("GenerateKey P-256: got %v", err)
	}
	for _, name := range []string{"validator", "account.1"} {
		fi, err := os.Stat(filepath.Join(s.Dir(), name+".key"))
		if err != nil || (runtime.GOOS != "windows" && fi.Mode().Perm() != 0o600) {
			t.Errorf("%s: %v, %v", name, fi.Mode(), err)
		}
	}
	keys, err := s.ListKeys(ctx)
	if err != nil || len(keys) != 2 || keys[0].Label != "account.1" || keys[1].Label != "validator" {
		t.Fatalf("ListKeys = %v, %v", keys, err)
	}
	if !keys[1].Public.(ed25519.PublicKey).Equal(ed.Public) || keys[0].Algorithm != signer.ECDSASecp256k1 || !equalPublic(k1.Public, keys[0].Public) {
		t.Errorf("ListKeys describes the keys otherwise than GenerateKey did")
	}

	// Export, then import into another store: same key, same bytes.
	armor, err := s.ExportArmor(ctx, "validator")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(armor, []byte("-----BEGIN TENDERMINT PRIVATE KEY-----\nkdf: bcrypt\nsalt: ")) {
		t.Errorf("export:\n%s", armor)
	}
	other := testStore(t)
	if _, err := other.with(secretOf("wrong"), UnlockOnce).ImportArmor(ctx, armor, "v"); !errors.Is(err, signer.ErrWrongPassphrase) {
		t.Errorf("ImportArmor with the wrong passphrase: got %v", err)
	}
	if _, err := os.Stat(filepath.Join(other.Dir(), "v.key")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a failed import left a file: %v", err)
	}
	info, err := other.ImportArmor(ctx, armor, "v")
	if err != nil || !info.Public.(ed25519.PublicKey).Equal(ed.Public) {
		t.Fatalf("ImportArmor = %v, %v", info, err)
	}
	if again, _ := other.ExportArmor(ctx, "v"); !bytes.Equal(again, armor) {
		t.Errorf("export after import differs")
	}

	// Open, sign, verify.
	for _, mode := range []Mode{UnlockOnce, PerSign} {
		sg, err := s.with(pw, mode).OpenKey(ctx, signer.KeyRef{Label: "validator"})
		if err != nil {
			t.Fatal(err)
		}
		if sg.(*Signer).Mode() != mode {
			t.Errorf("opened in %v, want %v", sg.(*Signer).Mode(), mode)
		}
		msg := []byte("vote")
		sig, err := sg.SignContext(ctx, msg)
		if err != nil {
			t.Fatal(err)
		}
		if err := signertest.VerifyStd(signer.Ed25519, ed.Public, msg, sig); err != nil {
			t.Errorf("%v: %v", mode, err)
		}
		sg.Close()
	}

	// Wrong passphrase: refused, file untouched.
	before, _ := os.ReadFile(filepath.Join(s.Dir(), "validator.key"))
	nope := s.with(secretOf("nope"), UnlockOnce)
	if _, err := nope.OpenKey(ctx, signer.KeyRef{Label: "validator"}); !errors.Is(err, signer.ErrWrongPassphrase) {
		t.Errorf("OpenKey with the wrong passphrase: got %v", err)
	} else if !strings.Contains(err.Error(), `"validator"`) || strings.Contains(err.Error(), "nope") {
		t.Errorf("error %q: want the key's name and never the passphrase", err)
	}
	if err := nope.ChangePassphrase(ctx, "validator", secretOf("new")); !errors.Is(err, signer.ErrWrongPassphrase) {
		t.Errorf("ChangePassphrase with the wrong passphrase: got %v", err)
	}
	if after, _ := os.ReadFile(filepath.Join(s.Dir(), "validator.key")); !bytes.Equal(before, after) {
		t.Error("a refused passphrase changed the file")
	}

	// Change the passphrase: the old one stops working, the key stays.
	newPw := s.with(secretOf("new passphrase"), UnlockOnce)
	if err := s.ChangePassphrase(ctx, "validator", newPw.cfg.Secret); err != nil {
		t.Fatal(err)
	}
	if _, err := s.OpenKey(ctx, signer.KeyRef{Label: "validator"}); !errors.Is(err, signer.ErrWrongPassphrase) {
		t.Errorf("old passphrase after the change: got %v", err)
	}
	sg, err := newPw.OpenKey(ctx, signer.KeyRef{Label: "validator"})
	if err != nil || !ed25519.PublicKey(ed.Public.(ed25519.PublicKey)).Equal(sg.Public()) {
		t.Fatalf("OpenKey with the new passphrase: %v", err)
	}
	if err := s.ChangePassphrase(ctx, "absent", secretOf("x")); !errors.Is(err, signer.ErrKeyNotFound) {
		t.Errorf("ChangePassphrase of a missing key: got %v", err)
	}

	// Delete: gone, but an open Signer keeps its key.
	if err := s.DeleteKey(ctx, signer.KeyRef{Label: "validator"}); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteKey(ctx, signer.KeyRef{Label: "validator"}); !errors.Is(err, signer.ErrKeyNotFound) {
		t.Errorf("DeleteKey twice: got %v", err)
	}
	if _, err := newPw.OpenKey(ctx, signer.KeyRef{Label: "validator"}); !errors.Is(err, signer.ErrKeyNotFound) {
		t.Errorf("OpenKey after DeleteKey: got %v", err)
	}
	msg := []byte("x")
	sig, err := sg.SignContext(ctx, msg)
	if err != nil {
		t.Errorf("a Signer open before DeleteKey: %v", err)
	} else if !ed25519.Verify(ed.Public.(ed25519.PublicKey), msg, sig) {
		t.Error("a Signer open before DeleteKey signs what does not verify")
	}
	sg.Close()
	entries, _ := os.ReadDir(s.Dir())
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Errorf("temporary file left behind: %s", e.Name())
		}
	}

	// After Close the store refuses everything.
	s.Close()
	if _, err := s.ListKeys(ctx); !errors.Is(err, signer.ErrClosed) {
		t.Errorf("ListKeys after Close: %v", err)
	}
	if _, err := s.OpenKey(ctx, signer.KeyRef{Label: "account.1"}); !errors.Is(err, signer.ErrClosed) {
		t.Errorf("OpenKey after Close: %v", err)
	}
	if _, err := s.GenerateKey(ctx, signer.Ed25519, "late"); !errors.Is(err, signer.ErrClosed) {
		t.Errorf("GenerateKey after Close: %v", err)
	}
}

// TestStoreNames: names that are no file names (paths, hidden files, the
// store's own files, look-alikes, bytes that are not UTF-8) name keys in
// files of KeyFileName's inside the directory, and nothing else; the
// empty name and names over MaxName are refused, and create nothing.
func TestStoreNames(t *testing.T) {
	ctx := context.Background()
	s := testStore(t)
	abs := filepath.Join(t.TempDir(), "abs")
	for _, name := range []string{"", strings.Repeat("a", MaxName+1)} {
		if _, err := s.GenerateKey(ctx, signer.Ed25519, name); !errors.Is(err, signer.ErrInvalidArgument) {
			t.Errorf("GenerateKey(%q): got %v, want ErrInvalidArgument", name, err)
		}
		if _, err := s.OpenKey(ctx, signer.KeyRef{Label: name}); !errors.Is(err, signer.ErrInvalidArgument) {
			t.Errorf("OpenKey(%q): got %v", name, err)
		}
		if err := s.DeleteKey(ctx, signer.KeyRef{Label: name}); !errors.Is(err, signer.ErrInvalidArgument) {
			t.Errorf("DeleteKey(%q): got %v", name, err)
		}
		if _, err := s.ImportArmor(ctx, nil, name); !errors.Is(err, signer.ErrInvalidArgument) {
			t.Errorf("ImportArmor(%q): got %v", name, err)
		}
		if _, err := s.ExportArmor(ctx, name); !errors.Is(err, signer.ErrInvalidArgument) {
			t.Errorf("ExportArmor(%q): got %v", name, err)
		}
		if _, err := s.KeyInfo(ctx, name); !errors.Is(err, signer.ErrInvalidArgument) {
			t.Errorf("KeyInfo(%q): got %v", name, err)
		}
		if err := s.ChangePassphrase(ctx, name, pw); !errors.Is(err, signer.ErrInvalidArgument) {
			t.Errorf("ChangePassphrase(%q): got %v", name, err)
		}
	}
	if entries, _ := os.ReadDir(filepath.Dir(s.Dir())); len(entries) != 0 {
		t.Errorf("refused names created the store: %v", entries)
	}

	odd := []string{".", "..", "../x", "a/b", `a\b`, ".hidden", ".lock", "-flag", "_x", "a b", "a\x00b", "é", "lock\n",
		"/etc/passwd", abs, `C:\x`, "c:x", "..\\x", "x/..", "a\u2215b", "a\uff0fb", "\u2024\u2024", "a\u200bb", "a\u202eyek", "ｋｅｙ",
		"a\xc0\xafb", "key\r", "50%", "%41", "a%2Fb", "a%~0123", strings.Repeat("ключ", MaxName/8), strings.Repeat("z", MaxName)}
	want := map[string]bool{}
	for _, name := range odd {
		info, err := s.GenerateKey(ctx, signer.Ed25519, name)
		if err != nil {
			t.Errorf("GenerateKey(%q): %v", name, err)
			continue
		}
		want[name] = true
		file, err := KeyFileName(name)
		if err != nil || strings.ContainsAny(file, `/\`) || strings.HasPrefix(file, ".") || len(file) > 255 {
			t.Errorf("KeyFileName(%q) = %q, %v", name, file, err)
		}
		if _, err := os.Lstat(filepath.Join(s.Dir(), file)); err != nil {
			t.Errorf("%q: no file %q: %v", name, file, err)
		}
		sg, err := s.OpenKey(ctx, signer.KeyRef{Label: name})
		if err != nil {
			t.Errorf("OpenKey(%q): %v", name, err)
			continue
		}
		if !info.Public.(ed25519.PublicKey).Equal(sg.Public()) {
			t.Errorf("OpenKey(%q) opened another key", name)
		}
		sg.Close()
	}
	entries, _ := os.ReadDir(s.Dir())
	if len(entries) != len(want)+1 { // and .lock
		t.Errorf("%d files in the store for %d keys", len(entries), len(want))
	}
	keys, err := s.ListKeys(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		if !want[k.Label] {
			t.Errorf("ListKeys shows %q", k.Label)
		}
		delete(want, k.Label)
	}
	if len(want) != 0 {
		t.Errorf("ListKeys leaves out %v", want)
	}
	for _, name := range []string{"../x", "/etc/passwd"} {
		if err := s.DeleteKey(ctx, signer.KeyRef{Label: name}); err != nil {
			t.Errorf("DeleteKey(%q): %v", name, err)
		}
	}
	if entries, _ := os.ReadDir(filepath.Dir(s.Dir())); len(entries) != 1 {
		t.Errorf("files appeared next to the store: %v", entries)
	}
	if entries, _ := os.ReadDir(filepath.Dir(abs)); len(entries) != 0 {
		t.Errorf("an absolute name wrote outside the store: %v", entries)
	}
	if _, err := os.Stat("/etc/passwd"); err != nil {
		t.Errorf("/etc/passwd: %v", err)
	}
}

func TestStoreRefusals(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	if runtime.GOOS != "windows" {
		open := filepath.Join(dir, "open")
		os.Mkdir(open, 0o755)
		os.Chmod(open, 0o755)
		if _, err := OpenStore(ctx, Config{Dir: open}); !errors.Is(err, signer.ErrPermissionDenied) {
			t.Errorf("a 0755 directory: got %v", err)
		}
	}
	for _, cost := range []int{-1, 3, MaxCost + 1, 31, 32} {
		if _, err := OpenStore(ctx, Config{Dir: filepath.Join(dir, "k"), Cost: cost}); !errors.Is(err, signer.ErrInvalidArgument) {
			t.Errorf("cost %d: got %v", cost, err)
		}
	}
	for _, cfg := range []Config{{}, {Dir: dir, Mode: Mode(9)}} {
		if _, err := OpenStore(ctx, cfg); !errors.Is(err, signer.ErrInvalidArgument) {
			t.Errorf("OpenStore(%+v): got %v", cfg, err)
		}
	}
	done, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := OpenStore(done, Config{Dir: dir}); !errors.Is(err, context.Canceled) {
		t.Errorf("OpenStore with a cancelled context: got %v", err)
	}
	s := testStore(t)
	if _, err := s.with(signer.SecretBytes(nil), UnlockOnce).GenerateKey(ctx, signer.Ed25519, "k"); !errors.Is(err, signer.ErrInvalidArgument) {
		t.Errorf("empty passphrase without AllowUnencrypted: got %v", err)
	}
	if _, err := s.with(nil, UnlockOnce).GenerateKey(ctx, signer.Ed25519, "k"); !errors.Is(err, signer.ErrInvalidArgument) {
		t.Errorf("nil Secret: got %v", err)
	}
	failing := signer.Secret(func() ([]byte, error) { return nil, errors.New("no terminal") })
	if _, err := s.with(failing, UnlockOnce).GenerateKey(ctx, signer.Ed25519, "k"); err == nil || !strings.Contains(err.Error(), "no terminal") {
		t.Errorf("failing Secret: got %v", err)
	}
	// An unencrypted key, allowed.
	u, _ := OpenStore(ctx, Config{Dir: filepath.Join(dir, "u"), Secret: signer.SecretBytes(nil), AllowUnencrypted: true, Mode: PerSign})
	info, err := u.GenerateKey(ctx, signer.Ed25519, "k")
	if err != nil {
		t.Fatal(err)
	}
	armor, _ := u.ExportArmor(ctx, "k")
	if bytes.Contains(armor, []byte("kdf")) {
		t.Errorf("want gnokey's unencrypted form:\n%s", armor)
	}
	if _, err := s.with(signer.SecretBytes(nil), UnlockOnce).ImportArmor(ctx, armor, "u"); !errors.Is(err, signer.ErrInvalidArgument) {
		t.Errorf("importing unencrypted armor without AllowUnencrypted: got %v", err)
	}
	sg, err := u.OpenKey(ctx, signer.KeyRef{Label: "k"})
	if err != nil {
		t.Fatal(err)
	}
	defer sg.Close()
	sig, err := sg.SignContext(ctx, []byte("m"))
	if err != nil || !ed25519.Verify(info.Public.(ed25519.PublicKey), []byte("m"), sig) {
		t.Errorf("unencrypted key: %v", err)
	}
}

func TestStoreCorruptFiles(t *testing.T) {
	ctx := context.Background()
	s := testStore(t)
	for _, name := range []string{"a", "b", "c"} {
		if _, err := s.GenerateKey(ctx, signer.Ed25519, name); err != nil {
			t.Fatal(err)
		}
	}
	path := func(n string) string { return filepath.Join(s.Dir(), n+".key") }
	// b: a flipped byte in the private block.
	data, _ := os.ReadFile(path("b"))
	i := bytes.LastIndex(data, []byte("\n=")) - 10
	data[i] ^= 1
	os.WriteFile(path("b"), data, 0o600)
	// c: the public block of a, so it claims another key.
	ad, _ := os.ReadFile(path("a"))
	cd, _ := os.ReadFile(path("c"))
	split := func(d []byte) int { return bytes.Index(d, []byte("-----BEGIN TENDERMINT PRIVATE KEY")) }
	os.WriteFile(path("c"), append(ad[:split(ad):split(ad)], cd[split(cd):]...), 0o600)
	// Junk that is not a key file is ignored by ListKeys.
	os.WriteFile(filepath.Join(s.Dir(), "notes.txt"), []byte("hi"), 0o600)
	os.WriteFile(filepath.Join(s.Dir(), ".x.key.tmp-1"), []byte("partial"), 0o600)

	keys, err := s.ListKeys(ctx)
	if !errors.Is(err, signer.ErrCorrupt) || !strings.Contains(err.Error(), `"b"`) {
		t.Errorf("ListKeys error: %v, want the corrupt key b named", err)
	}
	if len(keys) != 2 || keys[0].Label != "a" || keys[1].Label != "c" {
		t.Errorf("ListKeys = %v, want a and c", keys)
	}
	if _, err := s.OpenKey(ctx, signer.KeyRef{Label: "b"}); !errors.Is(err, signer.ErrCorrupt) {
		t.Errorf("OpenKey(b): got %v", err)
	}
	if _, err := s.with(pw, PerSign).OpenKey(ctx, signer.KeyRef{Label: "c"}); !errors.Is(err, signer.ErrCorrupt) {
		t.Errorf("OpenKey(c), whose public block is another key's: got %v", err)
	}
	before, _ := os.ReadFile(path("c"))
	if err := s.ChangePassphrase(ctx, "c", secretOf("new")); !errors.Is(err, signer.ErrCorrupt) {
		t.Errorf("ChangePassphrase(c): got %v", err)
	}
	if after, _ := os.ReadFile(path("c")); !bytes.Equal(before, after) {
		t.Error("ChangePassphrase rewrote a corrupt file")
	}
	if _, err := s.OpenKey(ctx, signer.KeyRef{Label: "a"}); err != nil {
		t.Errorf("OpenKey(a): %v", err)
	}
}

// The signer suite on keys the store opens, through signer's key store
// interfaces.
func TestStoreConformance(t *testing.T) {
	s := testStore(t)
	for _, mode := range []Mode{UnlockOnce, PerSign} {
		t.Run(mode.String(), func(t *testing.T) {
			signertest.RunKeyStore(t, s.with(pw, mode), signertest.KeyStoreOptions{
				Algorithms: []signer.Algorithm{signer.Ed25519, signer.ECDSASecp256k1, signer.ECDSAP256},
			})
		})
	}
}
