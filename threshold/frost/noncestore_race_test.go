package frost

import (
	"crypto/rand"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/signerkit/signerkit/internal/statefile"
	"github.com/signerkit/signerkit/signer"
)

// slowSyncFS is a statefile.MemFS whose syncs take a while, so that Generate,
// which unlocks the store for its sync, overlaps Signs that free slots.
type slowSyncFS struct{ statefile.MemFS }

type slowSyncFile struct{ File }

func (f slowSyncFile) Sync() error { time.Sleep(2 * time.Millisecond); return f.File.Sync() }

func (s *slowSyncFS) Open(name string) (File, error) {
	f, err := s.MemFS.Open(name)
	if err != nil {
		return nil, err
	}
	return slowSyncFile{f}, nil
}

// TestGenerateWhileSigning generates nonce pairs while signs free slots.
// Generate once kept a view of the free list across its sync, which a
// concurrent Sign overwrote by appending the slot it freed: the new pairs
// were filed under other slots, so handles fresh from Generate were
// refused as used, shares were made with the wrong nonces, and a pair left
// marked fresh on disk could have been handed out twice after a restart.
func TestGenerateWhileSigning(t *testing.T) {
	seed := make([]byte, 32)
	rand.Read(seed)
	d, err := SplitSeed(seed, 2, 3, rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	k1, k2 := d.Shares[0], d.Shares[1]
	st, err := OpenNonceStore(k1, NonceStoreConfig{FS: &slowSyncFS{}, Capacity: 256})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	first, err := st.Generate(128)
	if err != nil {
		t.Fatal(err)
	}
	msg := []byte("vote")
	var (
		wg        sync.WaitGroup
		mu        sync.Mutex
		bad, used int
	)
	sign := func(p Presigned) {
		defer wg.Done()
		other, err := Commit(k2, rand.Reader)
		if err != nil {
			t.Error(err)
			return
		}
		list := []SigningCommitments{p.Commitments, other.Commitments()}
		SortCommitments(list)
		sh, err := st.Sign(p.Handle, msg, list)
		mu.Lock()
		defer mu.Unlock()
		switch {
		case errors.Is(err, ErrNonceUsed):
			used++
		case err != nil:
			t.Error(err)
		case VerifySignatureShare(d.Public, sh, msg, list) != nil:
			bad++
		}
	}
	more := make(chan []Presigned, 64)
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(more)
		for range 40 {
			ps, err := st.Generate(2)
			if err != nil {
				t.Error(err)
				return
			}
			more <- ps
		}
	}()
	for _, p := range first {
		wg.Add(1)
		go sign(p)
	}
	for ps := range more {
		for _, p := range ps {
			wg.Add(1)
			go sign(p)
		}
	}
	wg.Wait()
	if bad > 0 || used > 0 {
		t.Fatalf("%d invalid shares and %d handles fresh from Generate refused as used", bad, used)
	}
}

// gatedSyncFS is a statefile.MemFS whose syncs, once armed, signal that they
// started and wait to be released, so a test can act during a sync.
type gatedSyncFS struct {
	statefile.MemFS
	mu      sync.Mutex
	armed   bool
	started chan struct{}
	release chan struct{}
}

type gatedSyncFile struct {
	File
	fs *gatedSyncFS
}

func (f gatedSyncFile) Sync() error {
	f.fs.mu.Lock()
	armed := f.fs.armed
	f.fs.armed = false
	f.fs.mu.Unlock()
	if armed {
		close(f.fs.started)
		<-f.fs.release
	}
	return f.File.Sync()
}

func (s *gatedSyncFS) Open(name string) (File, error) {
	f, err := s.MemFS.Open(name)
	if err != nil {
		return nil, err
	}
	return gatedSyncFile{f, s}, nil
}

// TestCloseDuringGenerate closes the store while Generate syncs. Generate
// once stored its pairs into the map Close had dropped after the sync, and
// panicked on the nil map; it must return ErrClosed.
func TestCloseDuringGenerate(t *testing.T) {
	seed := make([]byte, 32)
	rand.Read(seed)
	d, err := SplitSeed(seed, 2, 3, rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	fsys := &gatedSyncFS{started: make(chan struct{}), release: make(chan struct{})}
	st, err := OpenNonceStore(d.Shares[0], NonceStoreConfig{FS: fsys, Capacity: 16})
	if err != nil {
		t.Fatal(err)
	}
	fsys.mu.Lock()
	fsys.armed = true
	fsys.mu.Unlock()
	done := make(chan error, 1)
	go func() {
		_, err := st.Generate(4)
		done <- err
	}()
	<-fsys.started
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	close(fsys.release)
	if err := <-done; !errors.Is(err, signer.ErrClosed) {
		t.Fatalf("Generate during Close: %v, want ErrClosed", err)
	}
	// The pairs written are fresh in the file, never handed out.
	st2, err := OpenNonceStore(d.Shares[0], NonceStoreConfig{FS: &fsys.MemFS})
	if err != nil {
		t.Fatal(err)
	}
	defer st2.Close()
	if n := st2.Available(); n != 4 {
		t.Fatalf("%d fresh pairs after reopen, want 4", n)
	}
}

// TestCloseDuringGenerateSlowSync races Close against Generate on the
// slow-sync FS, as the report reproduced it.
func TestCloseDuringGenerateSlowSync(t *testing.T) {
	seed := make([]byte, 32)
	rand.Read(seed)
	d, err := SplitSeed(seed, 2, 3, rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	for range 20 {
		st, err := OpenNonceStore(d.Shares[0], NonceStoreConfig{FS: &slowSyncFS{}, Capacity: 16})
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() {
			_, err := st.Generate(4)
			done <- err
		}()
		time.Sleep(500 * time.Microsecond)
		st.Close()
		if err := <-done; err != nil && !errors.Is(err, signer.ErrClosed) {
			t.Fatal(err)
		}
	}
}
