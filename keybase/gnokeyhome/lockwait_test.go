package gnokeyhome

import (
	"context"
	"errors"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/syndtr/goleveldb/leveldb"

	"github.com/signerkit/signerkit/signer"
)

// doneAfterBusy is a context that reports its deadline exceeded once done
// is set, while its Done channel never becomes ready: it makes openDB's
// pause end on its timer with the context's deadline past, as a select
// that finds both ready may choose (a deadline that falls with the end of
// a pause, or a goroutine woken late on a loaded machine).
type doneAfterBusy struct {
	context.Context
	done atomic.Bool
}

func (c *doneAfterBusy) Err() error {
	if c.done.Load() {
		return context.DeadlineExceeded
	}
	return nil
}

// TestLockWaitEndsLocked: a read that waited on a writer's lock and whose
// context ended meanwhile fails with a *LockedError, even when the pause
// it was in ended on its timer rather than on the context. (It failed
// with the bare context error, "gnokeyhome: context deadline exceeded",
// when the select took the timer: TestLocked did, now and then, under
// load.)
func TestLockWaitEndsLocked(t *testing.T) {
	home := writeDB(t, fixtureRecords(t))
	w, err := leveldb.OpenFile(filepath.Join(home, dataDir, dbName), nil) // a writer holds the lock
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	ctx := &doneAfterBusy{Context: context.Background()}
	testHookLockBusy = func() { ctx.done.Store(true) }
	defer func() { testHookLockBusy = nil }()
	st, err := OpenStore(context.Background(), Config{Home: home, LockWait: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	_, err = st.Keys(ctx)
	var le *LockedError
	if !errors.As(err, &le) || !errors.Is(err, signer.ErrBusy) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Keys whose deadline passed while it waited on the lock: %v, want a *LockedError wrapping context.DeadlineExceeded", err)
	}
}
