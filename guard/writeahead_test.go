package guard

import (
	"crypto/ed25519"
	"errors"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/signerkit/signerkit/signbytes"
	"github.com/signerkit/signerkit/signer"
)

// holdSyncFS holds every Sync until the test releases it.
type holdSyncFS struct {
	FS
	hold    atomic.Bool
	syncing chan struct{} // a Sync has begun
	release chan struct{} // let it return
}

func (f *holdSyncFS) Open(name string) (File, error) {
	file, err := f.FS.Open(name)
	if err != nil {
		return nil, err
	}
	return &holdSyncFile{File: file, fs: f}, nil
}

type holdSyncFile struct {
	File
	fs *holdSyncFS
}

func (f *holdSyncFile) Sync() error {
	if !f.fs.hold.Load() {
		return f.File.Sync()
	}
	f.fs.syncing <- struct{}{}
	<-f.fs.release
	return f.File.Sync()
}

// TestWriteAheadOverlaps: with Config.WriteAhead the key signs while the
// record is being synced (the key below is held until the sync has begun,
// and the sync until the key has signed: a Guard that did one after the
// other would wait for ever), and the signature comes out only once the
// sync has returned.
func TestWriteAheadOverlaps(t *testing.T) {
	const chain = "ahead"
	fsys := &holdSyncFS{FS: memFS{}, syncing: make(chan struct{}), release: make(chan struct{})}
	key := newKey(3)
	g, err := New(key, Config{FS: fsys, WriteAhead: true})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if err := g.Init(t.Context(), chain, 1); err != nil {
		t.Fatal(err)
	}
	fsys.hold.Store(true)
	entered, release := key.Hold()
	req := msg(t, signbytes.CometBFT, chain, signbytes.Prevote, 5, 0, 1, baseTime)
	type answer struct {
		s   Signed
		err error
	}
	done := make(chan answer, 1)
	go func() { s, err := g.SignBytes(t.Context(), req); done <- answer{s, err} }()
	for range 2 { // the key and the sync both begin, in either order
		select {
		case <-entered:
		case <-fsys.syncing:
		case <-time.After(10 * time.Second):
			// One waits for the other: let both go, then fail.
			fsys.hold.Store(false)
			go func() { release <- struct{}{} }()
			<-done
			t.Fatal("the key and the state sync did not run at once")
		}
	}
	release <- struct{}{}
	select {
	case a := <-done:
		t.Fatalf("released before its record was synced: %+v, %v", a.s, a.err)
	case <-time.After(50 * time.Millisecond):
	}
	fsys.release <- struct{}{}
	a := <-done
	if a.err != nil || !ed25519.Verify(key.PublicKey(), req, a.s.Signature) {
		t.Fatalf("sign: %v", a.err)
	}
}

// TestWriteAheadFailures: a failed sync releases nothing, even though the
// key signed; a failed key leaves its height, round and step recorded,
// so that the same bytes are signed on a retry and other bytes refused.
func TestWriteAheadFailures(t *testing.T) {
	const chain = "ahead-fail"
	ctx := t.Context()
	ffs := &faultFS{FS: memFS{}}
	key := newKey(4)
	g, err := New(key, Config{FS: ffs, WriteAhead: true})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if err := g.Init(ctx, chain, 1); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("unplugged")
	key.SetErr(boom)
	prevote := msg(t, signbytes.CometBFT, chain, signbytes.Prevote, 2, 0, 1, baseTime)
	if _, err := g.SignBytes(ctx, prevote); !errors.Is(err, boom) {
		t.Fatalf("a failed key: %v", err)
	}
	st, err := g.State(ctx, chain)
	if err != nil || st.Height != 2 || st.Step != signbytes.Prevote.Step() {
		t.Fatalf("after a failed key the state is %+v (%v), want the prevote at 2 recorded", st, err)
	}
	key.SetErr(nil)
	other := msg(t, signbytes.CometBFT, chain, signbytes.Prevote, 2, 0, 2, baseTime)
	mustErr(t, func() error { _, err := g.SignBytes(ctx, other); return err }(), signer.ErrDoubleSign)
	s, err := g.SignBytes(ctx, prevote)
	if err != nil || !ed25519.Verify(key.PublicKey(), prevote, s.Signature) {
		t.Fatalf("the recorded prevote again: %v", err)
	}
	// A failed sync: the key signs, the signature is dropped, and the
	// chain refuses until restarted.
	signs := key.Signs()
	ffs.mu.Lock()
	ffs.syncErr = syscall.EIO
	ffs.mu.Unlock()
	precommit := msg(t, signbytes.CometBFT, chain, signbytes.Precommit, 2, 0, 1, baseTime)
	s, err = g.SignBytes(ctx, precommit)
	var se *StorageError
	if !errors.As(err, &se) || s.Signature != nil {
		t.Fatalf("a failed sync: %+v, %v; want no signature and a *StorageError", s, err)
	}
	if key.Signs() != signs+1 {
		t.Fatalf("the key made %d signatures during the failed sync, want 1 (made, then dropped)", key.Signs()-signs)
	}
}

// TestWriteAheadConcurrentSentries: sentries asking at once for one vote
// get one signature each of the same bytes, and one conflicting request
// among them is refused.
func TestWriteAheadConcurrentSentries(t *testing.T) {
	const chain = "ahead-sentries"
	ctx := t.Context()
	key := newKey(5)
	g, err := New(key, Config{FS: memFS{}, WriteAhead: true})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if err := g.Init(ctx, chain, 1); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	released := map[string]bool{}
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req := msg(t, signbytes.CometBFT, chain, signbytes.Prevote, 3, 0, byte(1+i/7), baseTime)
			s, err := g.SignBytes(ctx, req)
			if err != nil {
				return
			}
			if !ed25519.Verify(key.PublicKey(), s.SignBytes, s.Signature) {
				t.Error("a released signature does not verify")
			}
			mu.Lock()
			released[string(s.SignBytes)] = true
			mu.Unlock()
		}()
	}
	wg.Wait()
	if len(released) != 1 {
		t.Fatalf("%d different messages released at one height, round and step", len(released))
	}
}
