package gnokeyhome

import (
	"context"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/syndtr/goleveldb/leveldb"
	lerrors "github.com/syndtr/goleveldb/leveldb/errors"
	"github.com/syndtr/goleveldb/leveldb/opt"
	"github.com/syndtr/goleveldb/leveldb/storage"

	"github.com/signerkit/signerkit/internal/bech32"
	"github.com/signerkit/signerkit/signer"
)

// fixtureRecords reads every record of testdata/gnokey-home (written by
// gno's own keybase; see store_test.go) into a map, database key → value.
func fixtureRecords(t testing.TB) map[string][]byte {
	t.Helper()
	// In place: the fixture has no LOCK file, so roStorage reads it.
	src := filepath.Join("testdata", "gnokey-home", "data", "keys.db")
	db, err := leveldb.Open(roStorage{path: src}, &opt.Options{ReadOnly: true, ErrorIfMissing: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	out := map[string][]byte{}
	it := db.NewIterator(nil, nil)
	defer it.Release()
	for it.Next() {
		out[string(it.Key())] = append([]byte(nil), it.Value()...)
	}
	return out
}

// writeDB writes records into a new key database of a new home, with
// goleveldb directly, and returns the home.
func writeDB(t *testing.T, records map[string][]byte) string {
	t.Helper()
	home := t.TempDir()
	db, err := leveldb.OpenFile(filepath.Join(home, dataDir, dbName), nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range records {
		if err := db.Put([]byte(k), v, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	return home
}

func sized(b []byte) []byte { return append(binary.AppendUvarint(nil, uint64(len(b))), b...) }

func field(num int, v []byte) []byte {
	out := binary.AppendUvarint(nil, uint64(num<<3|wireBytes))
	out = binary.AppendUvarint(out, uint64(len(v)))
	return append(out, v...)
}

func anyOf(url string, fields ...[]byte) []byte {
	return append(field(1, []byte(url)), field(2, []byte(strings.Join(bytesToStrings(fields), "")))...)
}

func bytesToStrings(bs [][]byte) []string {
	out := make([]string, len(bs))
	for i, b := range bs {
		out[i] = string(b)
	}
	return out
}

// TestBadRecords: records that are not what gnokey writes are reported as
// *RecordError values naming the record; the others are still listed.
func TestBadRecords(t *testing.T) {
	ctx := context.Background()
	fix := fixtureRecords(t)
	good := fix["validator.info"]
	if good == nil {
		t.Fatal("no validator.info in the fixture")
	}
	edPub := anyOf(typePubEd25519, field(1, make([]byte, 32)))
	recs := map[string][]byte{
		"validator.info": good,
		"g19rl4cm2hmr8afy4kldpxz3fka4jguq0a0u3773.address": []byte("validator.info"),
		"garbage.info": []byte("\x05hello"),
		"renamed.info": good, // holds "validator"
		"unknown.info": sized(anyOf("/tm.keys.FutureInfo", field(1, []byte("unknown")))),
		"nopub.info":   sized(anyOf(typeLocal, field(1, []byte("nopub")))),
		"noarmor.info": sized(anyOf(typeLocal, field(1, []byte("noarmor")), field(2, edPub))),
		"short.info":   sized(anyOf(typeOffline, field(1, []byte("short")), field(2, anyOf(typePubEd25519, field(1, make([]byte, 31)))))),
		"g1qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqluuxe.address": []byte("gone.info"),
	}
	home := writeDB(t, recs)
	st, err := OpenStore(ctx, Config{Home: home})
	if err != nil {
		t.Fatal(err)
	}
	keys, err := st.Keys(ctx)
	if len(keys) != 1 || keys[0].Name != "validator" {
		t.Errorf("Keys = %v, want validator alone", keys)
	}
	for _, name := range []string{"garbage", "renamed", "unknown", "nopub", "noarmor", "short"} {
		if err == nil || !strings.Contains(err.Error(), `record "`+name+`.info"`) {
			t.Errorf("Keys' error does not report %s.info: %v", name, err)
		}
		_, kerr := st.KeyInfo(ctx, name)
		var re *RecordError
		want := signer.ErrCorrupt
		if name == "unknown" {
			want = signer.ErrUnsupported
		}
		if !errors.As(kerr, &re) || !errors.Is(kerr, want) {
			t.Errorf("KeyInfo(%q): %v, want a *RecordError wrapping %v", name, kerr, want)
		}
	}
	var re *RecordError
	if _, err := st.KeyInfo(ctx, "g1qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqluuxe"); !errors.As(err, &re) {
		t.Errorf("an index entry naming no record: %v", err)
	}
	if _, err := st.OpenKey(ctx, signer.KeyRef{Label: "garbage"}); !errors.Is(err, signer.ErrCorrupt) {
		t.Errorf("OpenKey of a garbled record: %v", err)
	}
}

// TestLockReleased: a read that finds the lock taken gets the database
// once the writer lets it go.
func TestLockReleased(t *testing.T) {
	home := writeDB(t, fixtureRecords(t))
	w, err := leveldb.OpenFile(filepath.Join(home, dataDir, dbName), nil)
	if err != nil {
		t.Fatal(err)
	}
	busy := 0
	testHookLockBusy = func() {
		if busy++; busy == 3 {
			w.Close()
		}
	}
	defer func() { testHookLockBusy = nil }()
	st, _ := OpenStore(context.Background(), Config{Home: home, LockWait: time.Hour})
	k, err := st.KeyInfo(context.Background(), "validator")
	if err != nil || k.Kind != Local {
		t.Fatalf("KeyInfo once the writer closed: %v, %v", k, err)
	}
	if busy != 3 {
		t.Errorf("found the lock taken %d times, want 3", busy)
	}
}

// TestLockAppears: when a LOCK file appears during a read made without
// one (a gnokey opened the copied home meanwhile), the read is made
// again, under the lock, and its result is the second read's alone.
func TestLockAppears(t *testing.T) {
	home := writeDB(t, fixtureRecords(t))
	path := filepath.Join(home, dataDir, dbName)
	if err := os.Remove(filepath.Join(path, lockName)); err != nil {
		t.Fatal(err)
	}
	var w *leveldb.DB
	unlocked, busy := 0, 0
	testHookUnlockedRead = func() {
		unlocked++
		var err error
		if w, err = leveldb.OpenFile(path, nil); err != nil { // as gnokey opens it
			t.Error(err)
		}
	}
	testHookLockBusy = func() {
		if busy++; busy == 1 {
			w.Close()
		}
	}
	defer func() { testHookUnlockedRead, testHookLockBusy = nil, nil }()
	st, _ := OpenStore(context.Background(), Config{Home: home, LockWait: time.Hour})
	keys, err := st.Keys(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if unlocked != 1 || busy != 1 {
		t.Errorf("%d reads without a lock, lock found taken %d times; want 1 and 1", unlocked, busy)
	}
	var n int
	for k := range fixtureRecords(t) {
		if strings.HasSuffix(k, infoSfx) {
			n++
		}
	}
	if len(keys) != n {
		t.Errorf("Keys: %d keys, want %d (the second read's only)", len(keys), n)
	}
}

// TestROStorageWrites: roStorage refuses every write.
func TestROStorageWrites(t *testing.T) {
	s := roStorage{path: t.TempDir()}
	fd := storage.FileDesc{Type: storage.TypeTable, Num: 1}
	if _, err := s.Create(fd); err == nil {
		t.Error("Create succeeded")
	}
	if s.Remove(fd) == nil || s.Rename(fd, storage.FileDesc{Type: storage.TypeTable, Num: 2}) == nil || s.SetMeta(fd) == nil {
		t.Error("a write succeeded")
	}
	if entries, _ := os.ReadDir(s.path); len(entries) != 0 {
		t.Errorf("files appeared: %v", entries)
	}
	if _, err := s.GetMeta(); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("GetMeta of an empty directory: %v, want os.ErrNotExist", err)
	}
}

// TestGetMeta: roStorage finds the manifest goleveldb's own file storage
// finds, opened read-only, with CURRENT as gnokey left it, missing,
// garbled, naming a missing manifest, and with pending copies.
func TestGetMeta(t *testing.T) {
	src := filepath.Join("testdata", "gnokey-home", "data", "keys.db")
	for _, c := range []struct {
		name  string
		files map[string]string // "" removes the file
	}{
		{"as written", nil},
		{"no CURRENT", map[string]string{"CURRENT": ""}},
		{"garbled CURRENT", map[string]string{"CURRENT": "MANIFEST-x\n"}},
		{"CURRENT without newline", map[string]string{"CURRENT": "MANIFEST-000027"}},
		{"missing manifest", map[string]string{"CURRENT": "MANIFEST-000099\n"}},
		{"nothing", map[string]string{"CURRENT": "", "CURRENT.bak": ""}},
		{"nothing valid", map[string]string{"CURRENT": "x\n", "CURRENT.bak": "y\n"}},
		{"pending, newer", map[string]string{"CURRENT.31": "MANIFEST-000031\n", "MANIFEST-000031": "m"}},
		{"pending, older", map[string]string{"CURRENT.20": "MANIFEST-000020\n", "MANIFEST-000020": "m"}},
		{"pending, garbled", map[string]string{"CURRENT.31": "garbage"}},
		{"pending, two", map[string]string{"CURRENT.31": "MANIFEST-000031\n", "CURRENT.32": "MANIFEST-000032\n", "MANIFEST-000031": "m"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			entries, err := os.ReadDir(src)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range entries {
				b, err := os.ReadFile(filepath.Join(src, e.Name()))
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, e.Name()), b, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			for name, v := range c.files {
				if v == "" {
					err = os.Remove(filepath.Join(dir, name))
				} else {
					err = os.WriteFile(filepath.Join(dir, name), []byte(v), 0o600)
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			got, gotErr := roStorage{path: dir}.GetMeta()
			fs, err := storage.OpenFile(dir, true)
			if err != nil {
				t.Fatal(err)
			}
			want, wantErr := fs.GetMeta()
			fs.Close()
			if got != want || (gotErr == nil) != (wantErr == nil) || lerrors.IsCorrupted(gotErr) != lerrors.IsCorrupted(wantErr) || errors.Is(gotErr, os.ErrNotExist) != errors.Is(wantErr, os.ErrNotExist) {
				t.Errorf("GetMeta: %v, %v; goleveldb's: %v, %v", got, gotErr, want, wantErr)
			}
		})
	}
}

// TestParseName: roStorage parses the names goleveldb gives its files.
func TestParseName(t *testing.T) {
	for _, c := range []struct {
		name string
		fd   storage.FileDesc
		ok   bool
	}{
		{"000014.ldb", storage.FileDesc{Type: storage.TypeTable, Num: 14}, true},
		{"000014.sst", storage.FileDesc{Type: storage.TypeTable, Num: 14}, true},
		{"000026.log", storage.FileDesc{Type: storage.TypeJournal, Num: 26}, true},
		{"000003.tmp", storage.FileDesc{Type: storage.TypeTemp, Num: 3}, true},
		{"MANIFEST-000027", storage.FileDesc{Type: storage.TypeManifest, Num: 27}, true},
		{"MANIFEST-000027x", storage.FileDesc{}, false},
		{"CURRENT", storage.FileDesc{}, false},
		{"LOCK", storage.FileDesc{}, false},
		{"12.txt", storage.FileDesc{}, false},
		{"-1.ldb", storage.FileDesc{}, false},
	} {
		fd, ok := parseName(c.name)
		if ok != c.ok || (ok && fd != c.fd) {
			t.Errorf("parseName(%q) = %v, %v; want %v, %v", c.name, fd, ok, c.fd, c.ok)
		}
		if ok && genName(fd) != c.name && !strings.HasSuffix(c.name, ".sst") {
			t.Errorf("genName(%v) = %q, want %q", fd, genName(fd), c.name)
		}
	}
}

func FuzzRecord(f *testing.F) {
	for _, v := range fixtureRecords(f) {
		f.Add(v)
	}
	f.Add([]byte{})
	f.Add([]byte("\x00"))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := decodeRecord(b)
		if err != nil {
			var re *RecordError
			if r != nil || !errors.As(err, &re) {
				t.Fatalf("decodeRecord: %v, %v", r, err)
			}
			return
		}
		if r.Kind < Local || r.Kind > Multi {
			t.Fatalf("kind %v", r.Kind)
		}
		if hrp, raw, err := bech32.DecodeBytes(r.Address); err != nil || hrp != "g" || len(raw) != 20 {
			t.Fatalf("address %q", r.Address)
		}
		if (r.Kind == Local) != (len(r.armor) > 0) {
			t.Fatalf("a %v key with %d bytes of armor", r.Kind, len(r.armor))
		}
		if r.Kind == Multi && r.Algorithm != 0 || r.Kind == Local && r.Algorithm == 0 {
			t.Fatalf("a %v key of algorithm %v", r.Kind, r.Algorithm)
		}
		if (r.Kind == Ledger) != (r.Path != "") {
			t.Fatalf("a %v key with path %q", r.Kind, r.Path)
		}
	})
}

// TestReadOnlyJournal: a database whose records are still in goleveldb's
// journal (as a writer leaves them until a compaction) is read without
// a byte of it changing: a read-only open replays the journal in memory.
func TestReadOnlyJournal(t *testing.T) {
	home := writeDB(t, fixtureRecords(t))
	dir := filepath.Join(home, dataDir, dbName)
	files := func() map[string]string {
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]string{}
		for _, e := range entries {
			b, err := os.ReadFile(filepath.Join(dir, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			out[e.Name()] = string(b)
		}
		return out
	}
	before := files()
	journal := false
	for name, b := range before {
		journal = journal || strings.HasSuffix(name, ".log") && len(b) > 0
	}
	if !journal {
		t.Fatal("the records are not in a journal")
	}
	st, _ := OpenStore(context.Background(), Config{Home: home})
	keys, err := st.Keys(context.Background())
	if err != nil || len(keys) != 7 {
		t.Fatalf("Keys: %d keys, %v", len(keys), err)
	}
	after := files()
	if len(after) != len(before) {
		t.Errorf("files %d → %d", len(before), len(after))
	}
	for name, b := range before {
		if after[name] != b {
			t.Errorf("%s changed", name)
		}
	}
}

// TestConcurrentReads: reads from several goroutines, and several Stores,
// share goleveldb's lock and all get through.
func TestConcurrentReads(t *testing.T) {
	home := writeDB(t, fixtureRecords(t))
	errs := make(chan error, 16)
	for i := range 16 {
		go func() {
			st, err := OpenStore(context.Background(), Config{Home: home, LockWait: time.Minute})
			if err == nil {
				_, err = st.KeyInfo(context.Background(), []string{"validator", "g19rl4cm2hmr8afy4kldpxz3fka4jguq0a0u3773"}[i%2])
			}
			errs <- err
		}()
	}
	for range 16 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

// TestWriterDuringRead: gnokey does not wait for the lock; a write that
// starts during a read here fails at once, and gets through after it.
func TestWriterDuringRead(t *testing.T) {
	home := writeDB(t, fixtureRecords(t))
	path := filepath.Join(home, dataDir, dbName)
	r, unlocked, err := openDB(context.Background(), home, time.Second)
	if err != nil || unlocked {
		t.Fatal(err, unlocked)
	}
	if w, err := leveldb.OpenFile(path, nil); err == nil || !lockBusy(err) {
		if w != nil {
			w.Close()
		}
		t.Fatalf("a writer's open during a read: %v, want the lock taken", err)
	}
	r.Close()
	w, err := leveldb.OpenFile(path, nil)
	if err != nil {
		t.Fatalf("a writer's open after the read: %v", err)
	}
	w.Close()
}
