package keybase

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	//lint:ignore SA1019 gnokey armors its key files with this package; the test reads them as it does
	pgparmor "golang.org/x/crypto/openpgp/armor"

	"github.com/signerkit/signerkit/signer"
)

// Writers in one process, through two Stores on one directory: the lock
// file keeps them apart, and waiting on it honours the context.
func TestStoreLockWaitsForContext(t *testing.T) {
	if !crossProcessLock {
		t.Skip("no lock file on this system")
	}
	a := testStore(t)
	b, err := OpenStore(context.Background(), Config{Dir: a.Dir(), Secret: pw, Cost: testCost})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.ensureDir(); err != nil {
		t.Fatal(err)
	}
	unlock, err := a.lock(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := b.GenerateKey(ctx, signer.Ed25519, "k"); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("GenerateKey while another Store holds the lock: got %v", err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := b.GenerateKey(context.Background(), signer.Ed25519, "k")
		done <- err
	}()
	time.Sleep(20 * time.Millisecond)
	select {
	case err := <-done:
		t.Fatalf("GenerateKey finished while another Store held the lock: %v", err)
	default:
	}
	unlock()
	if err := <-done; err != nil {
		t.Errorf("GenerateKey once the lock is free: %v", err)
	}
}

// Concurrent writers in one process: every GenerateKey of a name but one fails
// with ErrKeyExists.
func TestStoreConcurrentGenerate(t *testing.T) {
	s := testStore(t)
	var wg sync.WaitGroup
	var mu sync.Mutex
	wins := 0
	for range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := s.GenerateKey(context.Background(), signer.ECDSASecp256k1, "one")
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
		t.Errorf("%d GenerateKeys of one name succeeded", wins)
	}
}

// Armor that this package reads but gnokey's reader (openpgp/armor) does
// not, white space around the body lines, is stored and exported as
// gnokey writes it, so the export imports into gnokey.
func TestImportExportsWhatGnokeyReads(t *testing.T) {
	ctx := context.Background()
	k, _ := generate(signer.Ed25519)
	clean, err := EncryptArmor(ctx, k.ed25519(), []byte("pw"), testCost)
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
	if _, err := s.with(secretOf("pw"), UnlockOnce).ImportArmor(ctx, messy, "k"); err != nil {
		t.Fatal(err)
	}
	out, err := s.ExportArmor(ctx, "k")
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
	t.Parallel() // a store in a directory of its own
	ctx := context.Background()
	s := testStore(t)
	pass := []signer.Secret{secretOf("p0"), secretOf("p1")}
	info, err := s.with(pass[0], UnlockOnce).GenerateKey(ctx, signer.Ed25519, "k")
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
				got, err := s.KeyInfo(ctx, "k")
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
		if err := s.with(pass[i%2], UnlockOnce).ChangePassphrase(ctx, "k", pass[(i+1)%2]); err != nil {
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
// the key) go when the key is written again, once stale (a fresh one
// stays), and all of them when it is deleted; other keys' files stay.
func TestStoreRemovesStaleTemps(t *testing.T) {
	ctx := context.Background()
	s := testStore(t)
	if _, err := s.GenerateKey(ctx, signer.Ed25519, "validator"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GenerateKey(ctx, signer.Ed25519, "validator2"); err != nil {
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
	if err := s.ChangePassphrase(ctx, "validator", pw); err != nil {
		t.Fatal(err)
	}
	onlyStaleGone(t, "a write", old, fresh, other, dotted)
	old = leave(".validator.tmp-444", stale)
	if err := s.DeleteKey(ctx, signer.KeyRef{Label: "validator"}); err != nil {
		t.Fatal(err)
	}
	// Delete removes every temporary copy of the key, a fresh one too.
	onlyStaleGone(t, "Delete", old, other, dotted)
	onlyStaleGone(t, "Delete", fresh, other, dotted)
	if names, err := s.ListKeys(ctx); err != nil || len(names) != 1 {
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
