package gnokeyhome

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/syndtr/goleveldb/leveldb"
	lerrors "github.com/syndtr/goleveldb/leveldb/errors"
	"github.com/syndtr/goleveldb/leveldb/opt"

	"github.com/signerkit/signerkit/internal/backoff"
	"github.com/signerkit/signerkit/signer"
)

// gnokey's key database: "<home>/data/keys.db", a goleveldb database
// (tm2/pkg/crypto/keys.NewKeyBaseFromDir and tm2/pkg/db/goleveldb, v1.7.1).
const (
	dataDir   = "data"
	dbName    = "keys.db"
	infoSfx   = ".info"
	addrSfx   = ".address"
	maxLockMS = 50 // the longest pause between attempts at the lock
)

// LockedError is a gnokey key database that another process holds
// locked, for writing, for longer than the caller would wait (the
// context's deadline, or Config.LockWait). gnokey takes the lock for each
// command that writes (add, import, delete, rotate), for about as long as
// its key derivation: a fraction of a second. It unwraps to
// signer.ErrBusy and, when the context ended the wait, to the context's
// error.
type LockedError struct {
	// Path is the database's directory.
	Path string
	// Waited is how long the reader waited for the lock.
	Waited time.Duration
	// Err is the context's error when the context ended the wait, else
	// nil (Config.LockWait ran out).
	Err error
}

func (e *LockedError) Error() string {
	msg := fmt.Sprintf("gnokeyhome: %s is locked by another process (gnokey, writing?); gave up after %v", e.Path, e.Waited.Round(time.Millisecond))
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

// Unwrap returns signer.ErrBusy and, if set, Err.
func (e *LockedError) Unwrap() []error {
	if e.Err != nil {
		return []error{signer.ErrBusy, e.Err}
	}
	return []error{signer.ErrBusy}
}

// dbPath is the key database of a gnokey home.
func dbPath(home string) string { return filepath.Join(home, dataDir, dbName) }

// testHookLockBusy, set only by tests, runs each time the lock is found
// taken, before the pause.
var testHookLockBusy func()

// testHookUnlockedRead, set only by tests, runs after each read of a
// database without a LOCK file, before view checks for one.
var testHookUnlockedRead func()

// openDB opens the key database read-only. When the database has a LOCK
// file, openDB takes goleveldb's shared lock on it and waits (until ctx
// is done, or for wait) while a writer holds it exclusively. When it has
// none (a copied or backed-up home: goleveldb creates LOCK at each open
// and never removes it, so no gnokey has opened the database there),
// openDB reads it through roStorage, which takes no lock and so creates
// no file, and reports unlocked. A home without a key database gives a
// nil DB and no error: it holds no keys (gnokey creates the database at
// its first command).
func openDB(ctx context.Context, home string, wait time.Duration) (db *leveldb.DB, unlocked bool, err error) {
	path := dbPath(home)
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("gnokeyhome: %w", err)
	}
	if !fi.IsDir() {
		return nil, false, fmt.Errorf("gnokeyhome: %s is not a directory (gnokey's key database is one): %w", path, signer.ErrInvalidArgument)
	}
	o := &opt.Options{
		ReadOnly:       true,
		ErrorIfMissing: true,
		// A key database holds a few records: small caches, and a
		// small buffer for the journal that a read-only open replays
		// (4 MiB by default, allocated at each open).
		BlockCacheCapacity:     64 << 10,
		OpenFilesCacheCapacity: 8,
		WriteBuffer:            64 << 10,
	}
	if _, err := os.Lstat(filepath.Join(path, lockName)); errors.Is(err, fs.ErrNotExist) {
		db, err := leveldb.Open(roStorage{path: path}, o)
		if err != nil {
			return nil, false, openError(path, err)
		}
		return db, true, nil
	}
	start := time.Now()
	pause := backoff.Backoff{Min: time.Millisecond, Max: maxLockMS * time.Millisecond}
	for {
		if err := ctx.Err(); err != nil {
			return nil, false, fmt.Errorf("gnokeyhome: %w", err)
		}
		db, err := leveldb.OpenFile(path, o)
		switch {
		case err == nil:
			return db, false, nil
		case !lockBusy(err):
			return nil, false, openError(path, err)
		}
		if testHookLockBusy != nil {
			testHookLockBusy()
		}
		waited := time.Since(start)
		if waited >= wait {
			return nil, false, &LockedError{Path: path, Waited: waited}
		}
		backoff.Sleep(ctx, min(pause.Next(), wait-waited))
		// A context done during the pause ends the wait, whichever of the
		// two the sleep saw first: when both were ready (a deadline that
		// fell with the pause's end, or a late wakeup), it may have taken
		// the timer, and the wait must still end with a *LockedError, not
		// with the bare context error of the check before the first try.
		if err := ctx.Err(); err != nil {
			return nil, false, &LockedError{Path: path, Waited: time.Since(start), Err: err}
		}
	}
}

// openError is the error of a failed open of the database at path.
func openError(path string, err error) error {
	switch {
	case lerrors.IsCorrupted(err):
		return fmt.Errorf("gnokeyhome: %s: %w: %w", path, signer.ErrCorrupt, err)
	case errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("gnokeyhome: %s: %w: %w", path, signer.ErrPermissionDenied, err)
	}
	return fmt.Errorf("gnokeyhome: opening %s: %w", path, err)
}

// view runs f on the key database, open read-only for f's duration only,
// as gnokey opens it for each command, so that gnokey is never kept from
// writing for longer than one read. db is nil when the home has no key
// database yet.
//
// A database without a LOCK file is read without a lock (see openDB).
// Should LOCK appear by the end of that read, a gnokey opened the
// database meanwhile and may have been writing: view then runs f again,
// from the start, under the lock. f must therefore set its results, not
// add to what an earlier run left.
func (s *Store) view(ctx context.Context, f func(db *leveldb.DB) error) error {
	unlocked, err := s.viewOnce(ctx, f)
	if unlocked && testHookUnlockedRead != nil {
		testHookUnlockedRead()
	}
	if unlocked && hasLock(s.home) {
		_, err = s.viewOnce(ctx, f)
	}
	return err
}

// viewOnce runs f as view does, once, and reports whether it read the
// database without a lock.
func (s *Store) viewOnce(ctx context.Context, f func(db *leveldb.DB) error) (unlocked bool, err error) {
	if err := s.check(ctx); err != nil {
		return false, err
	}
	db, unlocked, err := openDB(ctx, s.home, s.cfg.LockWait)
	if err != nil {
		return false, err
	}
	if db == nil {
		return false, f(nil)
	}
	defer db.Close()
	return unlocked, f(db)
}

// hasLock reports whether the key database of home has a LOCK file (or
// whether that cannot be told).
func hasLock(home string) bool {
	_, err := os.Lstat(filepath.Join(dbPath(home), lockName))
	return !errors.Is(err, fs.ErrNotExist)
}

// get returns the value of key, or nil when there is none.
func get(db *leveldb.DB, key string) ([]byte, error) {
	if db == nil {
		return nil, nil
	}
	v, err := db.Get([]byte(key), nil)
	if errors.Is(err, leveldb.ErrNotFound) {
		return nil, nil
	}
	if lerrors.IsCorrupted(err) {
		return nil, fmt.Errorf("gnokeyhome: %w: %w", signer.ErrCorrupt, err)
	}
	if err != nil {
		return nil, fmt.Errorf("gnokeyhome: %w", err)
	}
	return v, nil
}

// readRecord reads and decodes the record of name ("<name>.info"), or
// returns nil when there is none.
func readRecord(db *leveldb.DB, name string) (*record, error) {
	v, err := get(db, name+infoSfx)
	if err != nil || v == nil {
		return nil, err
	}
	defer clear(v) // a key stored under an empty passphrase, in base64
	return checkRecord(name+infoSfx, v)
}

// checkRecord decodes the value v of the database key dbKey and checks
// that the record is of the name dbKey gives, as gnokey writes it.
func checkRecord(dbKey string, v []byte) (*record, error) {
	r, err := decodeRecord(v)
	if err != nil {
		var re *RecordError
		if errors.As(err, &re) {
			re.Key = quote(dbKey)
		}
		return nil, err
	}
	if r.Name+infoSfx != dbKey {
		r.wipe()
		return nil, &RecordError{Key: quote(dbKey), Problem: "it holds the key named " + quote(r.Name)}
	}
	return r, nil
}

// readAddress returns the name that gnokey's address index gives for
// addr ("<g1…>.address" holds "<name>.info"), and whether it has one.
func readAddress(db *leveldb.DB, addr string) (name string, found bool, err error) {
	v, err := get(db, addr+addrSfx)
	if err != nil || v == nil {
		return "", false, err
	}
	name, ok := strings.CutSuffix(string(v), infoSfx)
	if !ok {
		return "", false, &RecordError{Key: quote(addr + addrSfx), Problem: "it does not name a key's record"}
	}
	return name, true, nil
}

// records decodes every key record, in the database's (byte-wise) order.
// Records that cannot be read are left out and returned in the error.
func records(ctx context.Context, db *leveldb.DB) ([]*record, error) {
	if db == nil {
		return nil, nil
	}
	it := db.NewIterator(nil, nil)
	defer it.Release()
	var out []*record
	var errs []error
	for it.Next() {
		if err := ctx.Err(); err != nil {
			for _, r := range out {
				r.wipe()
			}
			return nil, fmt.Errorf("gnokeyhome: %w", err)
		}
		k := string(it.Key())
		if !strings.HasSuffix(k, infoSfx) {
			continue // the address index
		}
		r, err := checkRecord(k, it.Value())
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, r)
	}
	if err := it.Error(); err != nil {
		errs = append(errs, fmt.Errorf("gnokeyhome: reading the key database: %w", err))
	}
	return out, errors.Join(errs...)
}
