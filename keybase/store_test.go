package keybase

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	pgparmor "golang.org/x/crypto/openpgp/armor" //nolint:staticcheck // the reader gnokey uses

	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/signer/signertest"
)

func testStore(t testing.TB) *Store {
	t.Helper()
	s, err := OpenStore(filepath.Join(t.TempDir(), "keys"), Config{Cost: testCost})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

var pw = PassphraseBytes([]byte("correct horse battery staple"))

func TestStoreLifecycle(t *testing.T) {
	ctx := context.Background()
	s := testStore(t)
	if fi, err := os.Stat(s.Dir()); err != nil || (runtime.GOOS != "windows" && fi.Mode().Perm() != 0o700) {
		t.Fatalf("directory: %v, %v", fi.Mode(), err)
	}
	ed, err := s.Create(ctx, "validator", signer.Ed25519, pw)
	if err != nil {
		t.Fatal(err)
	}
	k1, err := s.Create(ctx, "account.1", signer.ECDSASecp256k1, pw)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Create(ctx, "validator", signer.Ed25519, pw); !errors.Is(err, signer.ErrKeyExists) {
		t.Errorf("second Create under one name: got %v", err)
	}
	if _, err := s.Create(ctx, "p256", signer.ECDSAP256, pw); !errors.Is(err, signer.ErrUnsupported) {
		t.Errorf("Create P-256: got %v", err)
	}
	for _, name := range []string{"validator", "account.1"} {
		fi, err := os.Stat(filepath.Join(s.Dir(), name+".key"))
		if err != nil || (runtime.GOOS != "windows" && fi.Mode().Perm() != 0o600) {
			t.Errorf("%s: %v, %v", name, fi.Mode(), err)
		}
	}
	keys, err := s.List(ctx)
	if err != nil || len(keys) != 2 || keys[0].Label != "account.1" || keys[1].Label != "validator" {
		t.Fatalf("List = %v, %v", keys, err)
	}
	if !keys[1].Public.(ed25519.PublicKey).Equal(ed.Public) || keys[0].Algorithm != signer.ECDSASecp256k1 || !equalPublic(k1.Public, keys[0].Public) {
		t.Errorf("List describes the keys otherwise than Create did")
	}

	// Export, then import into another store: same key, same bytes.
	armor, err := s.Export(ctx, "validator")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(armor, []byte("-----BEGIN TENDERMINT PRIVATE KEY-----\nkdf: bcrypt\nsalt: ")) {
		t.Errorf("export:\n%s", armor)
	}
	other := testStore(t)
	if _, err := other.Import(ctx, "v", armor, PassphraseBytes([]byte("wrong"))); !errors.Is(err, signer.ErrWrongPassphrase) {
		t.Errorf("Import with the wrong passphrase: got %v", err)
	}
	if _, err := os.Stat(filepath.Join(other.Dir(), "v.key")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a failed import left a file: %v", err)
	}
	info, err := other.Import(ctx, "v", armor, pw)
	if err != nil || !info.Public.(ed25519.PublicKey).Equal(ed.Public) {
		t.Fatalf("Import = %v, %v", info, err)
	}
	if again, _ := other.Export(ctx, "v"); !bytes.Equal(again, armor) {
		t.Errorf("export after import differs")
	}

	// Open, sign, verify.
	for _, mode := range []Mode{UnlockOnce, PerSign} {
		sg, err := s.Open(ctx, "validator", pw, mode)
		if err != nil {
			t.Fatal(err)
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
	if _, err := s.Open(ctx, "validator", PassphraseBytes([]byte("nope")), UnlockOnce); !errors.Is(err, signer.ErrWrongPassphrase) {
		t.Errorf("Open with the wrong passphrase: got %v", err)
	} else if !strings.Contains(err.Error(), `"validator"`) || strings.Contains(err.Error(), "nope") {
		t.Errorf("error %q: want the key's name and never the passphrase", err)
	}
	if err := s.ChangePassphrase(ctx, "validator", PassphraseBytes([]byte("nope")), PassphraseBytes([]byte("new"))); !errors.Is(err, signer.ErrWrongPassphrase) {
		t.Errorf("ChangePassphrase with the wrong passphrase: got %v", err)
	}
	if after, _ := os.ReadFile(filepath.Join(s.Dir(), "validator.key")); !bytes.Equal(before, after) {
		t.Error("a refused passphrase changed the file")
	}

	// Change the passphrase: the old one stops working, the key stays.
	newPw := PassphraseBytes([]byte("new passphrase"))
	if err := s.ChangePassphrase(ctx, "validator", pw, newPw); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Open(ctx, "validator", pw, UnlockOnce); !errors.Is(err, signer.ErrWrongPassphrase) {
		t.Errorf("old passphrase after the change: got %v", err)
	}
	sg, err := s.Open(ctx, "validator", newPw, UnlockOnce)
	if err != nil || !ed25519.PublicKey(ed.Public.(ed25519.PublicKey)).Equal(sg.Public()) {
		t.Fatalf("Open with the new passphrase: %v", err)
	}
	if err := s.ChangePassphrase(ctx, "absent", pw, newPw); !errors.Is(err, signer.ErrKeyNotFound) {
		t.Errorf("ChangePassphrase of a missing key: got %v", err)
	}

	// Delete: gone, but an open Signer keeps its key.
	if err := s.Delete(ctx, "validator"); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, "validator"); !errors.Is(err, signer.ErrKeyNotFound) {
		t.Errorf("Delete twice: got %v", err)
	}
	if _, err := s.Open(ctx, "validator", newPw, UnlockOnce); !errors.Is(err, signer.ErrKeyNotFound) {
		t.Errorf("Open after Delete: got %v", err)
	}
	if _, err := sg.SignContext(ctx, []byte("x")); err != nil {
		t.Errorf("a Signer open before Delete: %v", err)
	}
	sg.Close()
	entries, _ := os.ReadDir(s.Dir())
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Errorf("temporary file left behind: %s", e.Name())
		}
	}
}

func TestStoreNames(t *testing.T) {
	ctx := context.Background()
	s := testStore(t)
	abs := filepath.Join(t.TempDir(), "abs")
	bad := []string{"", ".", "..", "../x", "a/b", `a\b`, ".hidden", "-flag", "_x", "a b", "a\x00b", "é", strings.Repeat("a", MaxName+1), "lock\n",
		"/etc/passwd", abs, `C:\x`, "c:x", "..\\x", "x/..", "a\u2215b", "a\uff0fb", "\u2024\u2024", "a\u200bb", "a\u202eyek", "ｋｅｙ", "a\xc0\xafb", "key\r"}
	for _, name := range bad {
		if _, err := s.Create(ctx, name, signer.Ed25519, pw); !errors.Is(err, signer.ErrInvalidArgument) {
			t.Errorf("Create(%q): got %v, want ErrInvalidArgument", name, err)
		}
		if _, err := s.Open(ctx, name, pw, UnlockOnce); !errors.Is(err, signer.ErrInvalidArgument) {
			t.Errorf("Open(%q): got %v", name, err)
		}
		if err := s.Delete(ctx, name); !errors.Is(err, signer.ErrInvalidArgument) {
			t.Errorf("Delete(%q): got %v", name, err)
		}
		if _, err := s.Import(ctx, name, nil, pw); !errors.Is(err, signer.ErrInvalidArgument) {
			t.Errorf("Import(%q): got %v", name, err)
		}
		if _, err := s.Export(ctx, name); !errors.Is(err, signer.ErrInvalidArgument) {
			t.Errorf("Export(%q): got %v", name, err)
		}
		if _, err := s.Info(ctx, name); !errors.Is(err, signer.ErrInvalidArgument) {
			t.Errorf("Info(%q): got %v", name, err)
		}
		if err := s.ChangePassphrase(ctx, name, pw, pw); !errors.Is(err, signer.ErrInvalidArgument) {
			t.Errorf("ChangePassphrase(%q): got %v", name, err)
		}
	}
	entries, _ := os.ReadDir(filepath.Dir(s.Dir()))
	if len(entries) != 1 {
		t.Errorf("files appeared next to the store: %v", entries)
	}
	if entries, _ := os.ReadDir(filepath.Dir(abs)); len(entries) != 0 {
		t.Errorf("an absolute name wrote outside the store: %v", entries)
	}
	for _, name := range []string{"a", "A9", "node-1.validator_key", strings.Repeat("z", MaxName)} {
		if err := CheckName(name); err != nil {
			t.Errorf("CheckName(%q): %v", name, err)
		}
	}
}

func TestStoreRefusals(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	if runtime.GOOS != "windows" {
		open := filepath.Join(dir, "open")
		os.Mkdir(open, 0o755)
		os.Chmod(open, 0o755)
		if _, err := OpenStore(open, Config{}); !errors.Is(err, signer.ErrPermissionDenied) {
			t.Errorf("a 0755 directory: got %v", err)
		}
	}
	for _, cost := range []int{-1, 3, MaxCost + 1, 31, 32} {
		if _, err := OpenStore(filepath.Join(dir, "k"), Config{Cost: cost}); !errors.Is(err, signer.ErrInvalidArgument) {
			t.Errorf("cost %d: got %v", cost, err)
		}
	}
	s := testStore(t)
	if _, err := s.Create(ctx, "k", signer.Ed25519, PassphraseBytes(nil)); !errors.Is(err, signer.ErrInvalidArgument) {
		t.Errorf("empty passphrase without AllowUnencrypted: got %v", err)
	}
	if _, err := s.Create(ctx, "k", signer.Ed25519, nil); !errors.Is(err, signer.ErrInvalidArgument) {
		t.Errorf("nil Passphrase: got %v", err)
	}
	failing := Passphrase(func() ([]byte, error) { return nil, errors.New("no terminal") })
	if _, err := s.Create(ctx, "k", signer.Ed25519, failing); err == nil || !strings.Contains(err.Error(), "no terminal") {
		t.Errorf("failing Passphrase: got %v", err)
	}
	// An unencrypted key, allowed.
	u, _ := OpenStore(filepath.Join(dir, "u"), Config{AllowUnencrypted: true})
	info, err := u.Create(ctx, "k", signer.Ed25519, PassphraseBytes(nil))
	if err != nil {
		t.Fatal(err)
	}
	armor, _ := u.Export(ctx, "k")
	if bytes.Contains(armor, []byte("kdf")) {
		t.Errorf("want gnokey's unencrypted form:\n%s", armor)
	}
	if _, err := s.Import(ctx, "u", armor, PassphraseBytes(nil)); !errors.Is(err, signer.ErrInvalidArgument) {
		t.Errorf("importing unencrypted armor without AllowUnencrypted: got %v", err)
	}
	sg, err := u.Open(ctx, "k", PassphraseBytes(nil), PerSign)
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
		if _, err := s.Create(ctx, name, signer.Ed25519, pw); err != nil {
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
	// Junk that is not a key file is ignored by List.
	os.WriteFile(filepath.Join(s.Dir(), "notes.txt"), []byte("hi"), 0o600)
	os.WriteFile(filepath.Join(s.Dir(), ".x.key.tmp-1"), []byte("partial"), 0o600)

	keys, err := s.List(ctx)
	if !errors.Is(err, signer.ErrCorrupt) || !strings.Contains(err.Error(), `"b"`) {
		t.Errorf("List error: %v, want the corrupt key b named", err)
	}
	if len(keys) != 2 || keys[0].Label != "a" || keys[1].Label != "c" {
		t.Errorf("List = %v, want a and c", keys)
	}
	if _, err := s.Open(ctx, "b", pw, UnlockOnce); !errors.Is(err, signer.ErrCorrupt) {
		t.Errorf("Open(b): got %v", err)
	}
	if _, err := s.Open(ctx, "c", pw, PerSign); !errors.Is(err, signer.ErrCorrupt) {
		t.Errorf("Open(c), whose public block is another key's: got %v", err)
	}
	before, _ := os.ReadFile(path("c"))
	if err := s.ChangePassphrase(ctx, "c", pw, PassphraseBytes([]byte("new"))); !errors.Is(err, signer.ErrCorrupt) {
		t.Errorf("ChangePassphrase(c): got %v", err)
	}
	if after, _ := os.ReadFile(path("c")); !bytes.Equal(before, after) {
		t.Error("ChangePassphrase rewrote a corrupt file")
	}
	if _, err := s.Open(ctx, "a", pw, UnlockOnce); err != nil {
		t.Errorf("Open(a): %v", err)
	}
}

// The signer suite on keys the store opens, through signer's key store
// interfaces.
func TestStoreConformance(t *testing.T) {
	s := testStore(t)
	for _, mode := range []Mode{UnlockOnce, PerSign} {
		t.Run(mode.String(), func(t *testing.T) {
			signertest.RunKeyStore(t, s.Keys(pw, mode), signertest.KeyStoreOptions{
				Algorithms: []signer.Algorithm{signer.Ed25519, signer.ECDSASecp256k1, signer.ECDSAP256},
			})
		})
	}
}

// Writers in one process, through two Stores on one directory: the lock
// file keeps them apart, and waiting on it honours the context.
func TestStoreLockWaitsForContext(t *testing.T) {
	if !crossProcessLock {
		t.Skip("no lock file on this system")
	}
	a := testStore(t)
	b, err := OpenStore(a.Dir(), Config{Cost: testCost})
	if err != nil {
		t.Fatal(err)
	}
	unlock, err := a.lock(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := b.Create(ctx, "k", signer.Ed25519, pw); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Create while another Store holds the lock: got %v", err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := b.Create(context.Background(), "k", signer.Ed25519, pw)
		done <- err
	}()
	time.Sleep(20 * time.Millisecond)
	select {
	case err := <-done:
		t.Fatalf("Create finished while another Store held the lock: %v", err)
	default:
	}
	unlock()
	if err := <-done; err != nil {
		t.Errorf("Create once the lock is free: %v", err)
	}
}

// Writers in two processes race to create the same keys and to change one
// key's passphrase. Each name goes to exactly one writer, whose key it
// holds, and every file stays whole and opens. Both processes start racing
// together and pause between checking a name and renaming onto it, so
// without the lock file both would take names (this test fails with
// tryLock always succeeding).
func TestStoreTwoProcesses(t *testing.T) {
	if !crossProcessLock {
		t.Skip("no lock file on this system")
	}
	s := testStore(t)
	ctx := context.Background()
	if _, err := s.Create(ctx, "shared", signer.Ed25519, PassphraseBytes([]byte("p0"))); err != nil {
		t.Fatal(err)
	}
	cmd := writerProcess(s)
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	child := bufio.NewReader(stdout)
	if line, _ := child.ReadString('\n'); line != "READY\n" {
		more, _ := io.ReadAll(child)
		t.Fatalf("writer process: %v\n%s%s", cmd.Wait(), line, more)
	}
	rest := make(chan []byte, 1)
	go func() { b, _ := io.ReadAll(child); rest <- b }()
	mine := raceWriter(t, s, "parent")
	out := <-rest
	if err := cmd.Wait(); err != nil {
		t.Fatalf("writer process: %v\n%s", err, out)
	}
	var theirs map[string]string
	for line := range strings.Lines(string(out)) {
		if rest, ok := strings.CutPrefix(line, "WON "); ok {
			if err := json.Unmarshal([]byte(rest), &theirs); err != nil {
				t.Fatal(err)
			}
		}
	}
	if theirs == nil {
		t.Fatalf("writer process reported nothing:\n%s", out)
	}
	for i := range raceNames {
		name := fmt.Sprintf("race-%d", i)
		m, t2 := mine[name], theirs[name]
		if (m == "") == (t2 == "") {
			t.Errorf("%s: parent won %q, child won %q: want exactly one", name, m, t2)
			continue
		}
		info, err := s.Info(ctx, name)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if got := fmt.Sprintf("%x", info.Public); got != m+t2 {
			t.Errorf("%s holds %s, but the winner made %s", name, got, m+t2)
		}
		if _, err := s.Open(ctx, name, pw, UnlockOnce); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := openAny(ctx, s, "shared"); err != nil {
		t.Errorf("shared: %v", err)
	}
	t.Logf("parent won %d names, child %d", len(mine), len(theirs))
}

const raceNames = 12

// raceWriter creates race-0 … race-11, taking the names the other process
// has not, and changes the passphrase of "shared" between p0 and p1 as it
// goes, pausing in each rename between the check and the rename. It
// returns the public keys of the names it won.
func raceWriter(t testing.TB, s *Store, who string) map[string]string {
	testHookChecked = func() { time.Sleep(3 * time.Millisecond) }
	defer func() { testHookChecked = nil }()
	ctx := context.Background()
	won := map[string]string{}
	for i := range raceNames {
		name := fmt.Sprintf("race-%d", i)
		info, err := s.Create(ctx, name, signer.Ed25519, pw)
		switch {
		case err == nil:
			won[name] = fmt.Sprintf("%x", info.Public)
		case !errors.Is(err, signer.ErrKeyExists):
			t.Errorf("%s: Create(%s): %v", who, name, err)
		}
		// Whichever passphrase "shared" has now, change it to the other.
		old := []byte("p0")
		if _, err := s.Open(ctx, "shared", PassphraseBytes(old), PerSign); err != nil {
			old = []byte("p1")
		}
		next := []byte("p" + strconv.Itoa(1-int(old[1]-'0')))
		err = s.ChangePassphrase(ctx, "shared", PassphraseBytes(old), PassphraseBytes(next))
		if err != nil && !errors.Is(err, signer.ErrWrongPassphrase) { // the other changed it first
			t.Errorf("%s: ChangePassphrase: %v", who, err)
		}
	}
	return won
}

func openAny(ctx context.Context, s *Store, name string) (*Signer, error) {
	if sg, err := s.Open(ctx, name, PassphraseBytes([]byte("p0")), UnlockOnce); err == nil {
		return sg, nil
	}
	return s.Open(ctx, name, PassphraseBytes([]byte("p1")), UnlockOnce)
}

// A store locked by another process: writers here wait for it, within
// their deadline, and go ahead once it is released.
func TestStoreLockedByAnotherProcess(t *testing.T) {
	if !crossProcessLock {
		t.Skip("no lock file on this system")
	}
	s := testStore(t)
	cmd := writerProcess(s, "KEYBASE_TEST_WRITER_HOLD=1")
	release, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer release.Close()
	buf := make([]byte, len("LOCKED\n"))
	if _, err := io.ReadFull(stdout, buf); err != nil || string(buf) != "LOCKED\n" {
		t.Fatalf("helper: %q, %v", buf, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if _, err := s.Create(ctx, "k", signer.Ed25519, pw); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Create while another process holds the lock: got %v", err)
	}
	if err := s.Delete(ctx, "k"); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Delete while another process holds the lock: got %v", err)
	}
	release.Close()
	if _, err := s.Create(context.Background(), "k", signer.Ed25519, pw); err != nil {
		t.Errorf("Create after the other process let go: %v", err)
	}
}

// writerProcess is this test binary run as TestHelperWriter on s's
// directory, with env added to its environment.
func writerProcess(s *Store, env ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperWriter$", "-test.count=1")
	cmd.Env = append(append(os.Environ(), "KEYBASE_TEST_WRITER_DIR="+s.Dir()), env...)
	return cmd
}

// TestHelperWriter is the second process of TestStoreTwoProcesses and
// TestStoreLockedByAnotherProcess; it does nothing unless they start it.
func TestHelperWriter(t *testing.T) {
	dir := os.Getenv("KEYBASE_TEST_WRITER_DIR")
	if dir == "" {
		t.Skip("run by TestStoreTwoProcesses")
	}
	s, err := OpenStore(dir, Config{Cost: testCost})
	if err != nil {
		t.Fatal(err)
	}
	if os.Getenv("KEYBASE_TEST_WRITER_HOLD") != "" {
		unlock, err := s.lock(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		fmt.Println("LOCKED")
		io.Copy(io.Discard, os.Stdin) // until the parent closes it
		unlock()
		return
	}
	fmt.Println("READY")
	won := raceWriter(t, s, "child")
	b, _ := json.Marshal(won)
	fmt.Printf("WON %s\n", b)
}

// Concurrent writers in one process: every Create of a name but one fails
// with ErrKeyExists.
func TestStoreConcurrentCreate(t *testing.T) {
	s := testStore(t)
	var wg sync.WaitGroup
	var mu sync.Mutex
	wins := 0
	for range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := s.Create(context.Background(), "one", signer.ECDSASecp256k1, pw)
			mu.Lock()
			defer mu.Unlock()
			if err == nil {
				wins++
			} else if !errors.Is(err, signer.ErrKeyExists) {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if wins != 1 {
		t.Errorf("%d Creates of one name succeeded", wins)
	}
}

// Armor that this package reads but gnokey's reader (openpgp/armor) does
// not, white space around the body lines, is stored and exported as
// gnokey writes it, so the export imports into gnokey.
func TestImportExportsWhatGnokeyReads(t *testing.T) {
	ctx := context.Background()
	k, _ := generate(signer.Ed25519)
	clean, err := EncryptArmor(ctx, k.ed, []byte("pw"), testCost)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(clean), "\n")
	body := slices.Index(lines, "") + 1
	for i := body; i < len(lines); i++ { // the body, the checksum and the END line
		lines[i] = " " + lines[i] + " \t"
	}
	messy := []byte("exported on Windows\r\n" + strings.Join(lines, "\r\n") + "\r\n")
	if blk, err := pgparmor.Decode(bytes.NewReader(messy)); err == nil {
		if _, err := io.ReadAll(blk.Body); err == nil {
			t.Fatal("openpgp/armor reads the messy armor: the test shows nothing")
		}
	}
	s := testStore(t)
	if _, err := s.Import(ctx, "k", messy, PassphraseBytes([]byte("pw"))); err != nil {
		t.Fatal(err)
	}
	out, err := s.Export(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out, clean) {
		t.Errorf("export:\n%q\nwant the armor as written:\n%q", out, clean)
	}
	blk, err := pgparmor.Decode(bytes.NewReader(out))
	if err != nil {
		t.Fatalf("openpgp/armor cannot read the export: %v", err)
	}
	if _, err := io.ReadAll(blk.Body); err != nil {
		t.Fatalf("openpgp/armor cannot read the export: %v", err)
	}
}

// Readers never see a key file half written: while one goroutine keeps
// replacing a key's file, others read it, and every read finds a whole
// file.
func TestStoreReadersSeeWholeFiles(t *testing.T) {
	ctx := context.Background()
	s := testStore(t)
	pass := []Passphrase{PassphraseBytes([]byte("p0")), PassphraseBytes([]byte("p1"))}
	info, err := s.Create(ctx, "k", signer.Ed25519, pass[0])
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	halt := sync.OnceFunc(func() { close(stop) })
	var wg sync.WaitGroup
	var reads sync.Map
	for r := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n := 0
			for {
				select {
				case <-stop:
					reads.Store(r, n)
					return
				default:
				}
				got, err := s.Info(ctx, "k")
				if err != nil {
					t.Errorf("reader %d, read %d: %v", r, n, err)
					halt()
					reads.Store(r, n)
					return
				}
				if !equalPublic(got.Public, info.Public) {
					t.Errorf("reader %d: another key", r)
				}
				n++
			}
		}()
	}
	for i := range 30 {
		if err := s.ChangePassphrase(ctx, "k", pass[i%2], pass[(i+1)%2]); err != nil {
			t.Error(err)
			break
		}
		select {
		case <-stop:
		default:
			continue
		}
		break
	}
	halt()
	wg.Wait()
	reads.Range(func(r, n any) bool {
		if n.(int) == 0 {
			t.Errorf("reader %v read nothing while the file was replaced", r)
		}
		return true
	})
}

// Temporary files a crashed writer left behind (each an encrypted copy of
// the key) go when the key is written again or deleted, once stale; a
// fresh one may be a live writer's and stays, as do other keys' files.
func TestStoreRemovesStaleTemps(t *testing.T) {
	ctx := context.Background()
	s := testStore(t)
	if _, err := s.Create(ctx, "validator", signer.Ed25519, pw); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Create(ctx, "validator2", signer.Ed25519, pw); err != nil {
		t.Fatal(err)
	}
	key, err := os.ReadFile(s.path("validator"))
	if err != nil {
		t.Fatal(err)
	}
	stale := time.Now().Add(-2 * staleTemp)
	leave := func(name string, mtime time.Time) string {
		p := filepath.Join(s.Dir(), name)
		if err := os.WriteFile(p, key, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, mtime, mtime); err != nil {
			t.Fatal(err)
		}
		return p
	}
	old := leave(".validator.tmp-111", stale)
	fresh := leave(".validator.tmp-222", time.Now())
	other := leave(".validator2.tmp-333", stale)
	// Key names may hold ".tmp-": this is the key "validator.tmp-x"'s.
	dotted := leave(".validator.tmp-x.tmp-555", stale)
	if err := s.ChangePassphrase(ctx, "validator", pw, pw); err != nil {
		t.Fatal(err)
	}
	onlyStaleGone(t, "a write", old, fresh, other, dotted)
	old = leave(".validator.tmp-444", stale)
	if err := s.Delete(ctx, "validator"); err != nil {
		t.Fatal(err)
	}
	onlyStaleGone(t, "Delete", old, fresh, other, dotted)
	if names, err := s.List(ctx); err != nil || len(names) != 1 {
		t.Errorf("List: %v, %v; want validator2 only", names, err)
	}
}

// onlyStaleGone checks, after what, that the stale temporary file is gone
// and the others (a fresh one, other keys') are there.
func onlyStaleGone(t *testing.T, after, stale string, keep ...string) {
	t.Helper()
	exists := func(p string) bool { _, err := os.Lstat(p); return err == nil }
	if exists(stale) {
		t.Fatalf("after %s: the stale temporary file %s is still there", after, filepath.Base(stale))
	}
	for _, p := range keep {
		if !exists(p) {
			t.Fatalf("after %s: %s was removed; want only the stale one gone", after, filepath.Base(p))
		}
	}
}
