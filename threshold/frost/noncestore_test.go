package frost

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"io/fs"
	mrand "math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/signerkit/signerkit/internal/statefile"
	"github.com/signerkit/signerkit/signer"
)

// crashFS is a FS in memory that keeps apart what was synced from
// what was only written, so a test can take the image a crash would leave:
// the synced bytes plus any subset of the later writes, each possibly torn.
type crashFS struct {
	mu     sync.Mutex
	files  map[string]*crashFile
	onSync func() error // called before each sync; an error fails it
	syncs  int
}

type crashFile struct {
	fs      *crashFS
	durable []byte
	current []byte
	pending []pendingWrite
}

type pendingWrite struct {
	off  int64
	data []byte
}

func (c *crashFS) Open(name string) (File, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if f := c.files[name]; f != nil {
		return f, nil
	}
	return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
}

func (c *crashFS) Create(name string, data []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.files == nil {
		c.files = map[string]*crashFile{}
	}
	if c.files[name] != nil {
		return &fs.PathError{Op: "create", Path: name, Err: fs.ErrExist}
	}
	c.files[name] = &crashFile{fs: c, durable: bytes.Clone(data), current: bytes.Clone(data)}
	return nil
}

func (f *crashFile) ReadAt(p []byte, off int64) (int, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if off >= int64(len(f.current)) {
		return 0, io.EOF
	}
	n := copy(p, f.current[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

func grow(b []byte, end int64) []byte {
	if end > int64(len(b)) {
		b = append(b, make([]byte, end-int64(len(b)))...)
	}
	return b
}

func (f *crashFile) WriteAt(p []byte, off int64) (int, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	f.current = grow(f.current, off+int64(len(p)))
	copy(f.current[off:], p)
	f.pending = append(f.pending, pendingWrite{off, bytes.Clone(p)})
	return len(p), nil
}

func (f *crashFile) Sync() error {
	f.fs.mu.Lock()
	hook := f.fs.onSync
	f.fs.mu.Unlock()
	if hook != nil {
		if err := hook(); err != nil {
			return err
		}
	}
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	f.fs.syncs++
	f.durable = bytes.Clone(f.current)
	f.pending = nil
	return nil
}

func (f *crashFile) Close() error { return nil }

// crash returns the FS a crash would leave now: each unsynced write is
// lost, kept, or torn at a random byte.
func (c *crashFS) crash(r *mrand.Rand) *crashFS {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := &crashFS{files: map[string]*crashFile{}}
	for name, f := range c.files {
		img := bytes.Clone(f.durable)
		for _, w := range f.pending {
			switch r.IntN(3) {
			case 0: // lost
			case 1:
				img = grow(img, w.off+int64(len(w.data)))
				copy(img[w.off:], w.data)
			case 2:
				k := r.IntN(len(w.data))
				img = grow(img, w.off+int64(k))
				copy(img[w.off:], w.data[:k])
			}
		}
		out.files[name] = &crashFile{fs: out, durable: img, current: bytes.Clone(img)}
	}
	return out
}

type nonceFixture struct {
	d     *Dealt
	other *KeyPackage
	fixed SigningCommitments // participant 2's, for lists nobody aggregates
}

func newNonceFixture(t *testing.T) *nonceFixture {
	d, err := Split(scalarFromUint(12345), 2, 3, rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	n, _ := Commit(d.Shares[1], rand.Reader)
	return &nonceFixture{d: d, other: d.Shares[1], fixed: n.Commitments()}
}

// list is a commitment list with p and participant 2's fixed commitments,
// for tests of the store alone (the shares made are not aggregated).
func (f *nonceFixture) list(p Presigned) []SigningCommitments {
	return []SigningCommitments{p.Commitments, f.fixed}
}

// sign asks store (participant 1) for a share with handle h, together with
// a fresh commitment of participant 2, and checks the aggregate.
func (f *nonceFixture) sign(t *testing.T, s *NonceStore, p Presigned, msg []byte) error {
	n2, _ := Commit(f.other, rand.Reader)
	list := []SigningCommitments{p.Commitments, n2.Commitments()}
	sh1, err := s.Sign(p.Handle, msg, list)
	if err != nil {
		n2.Wipe()
		return err
	}
	sh2, err := Sign(f.other, n2, msg, list)
	if err != nil {
		t.Fatal(err)
	}
	sig, err := Aggregate(f.d.Public, msg, list, []SignatureShare{sh1, sh2})
	if err != nil {
		t.Fatalf("aggregate: %v", err)
	}
	if !ed25519.Verify(f.d.Public.GroupPublicKey(), msg, sig) {
		t.Fatal("signature does not verify")
	}
	return nil
}

func TestNonceStoreSignsOnce(t *testing.T) {
	f := newNonceFixture(t)
	var mem statefile.MemFS
	s, err := OpenNonceStore(f.d.Shares[0], NonceStoreConfig{FS: &mem, Capacity: 8})
	if err != nil {
		t.Fatal(err)
	}
	ps, err := s.Generate(10)
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != 8 || s.Available() != 8 {
		t.Fatalf("generated %d, available %d; want 8 (the capacity)", len(ps), s.Available())
	}
	if err := f.sign(t, s, ps[0], []byte("one")); err != nil {
		t.Fatal(err)
	}
	if err := f.sign(t, s, ps[0], []byte("two")); !errors.Is(err, ErrNonceUsed) {
		t.Fatalf("second use of a nonce: %v, want ErrNonceUsed", err)
	}
	// A request that does not carry the pair's commitments leaves it fresh.
	n2, _ := Commit(f.other, rand.Reader)
	wrong := []SigningCommitments{ps[2].Commitments, n2.Commitments()}
	if _, err := s.Sign(ps[1].Handle, []byte("x"), wrong); !errors.Is(err, signer.ErrInvalidArgument) {
		t.Fatalf("sign with another pair's commitments: %v", err)
	}
	if err := f.sign(t, s, ps[1], []byte("three")); err != nil {
		t.Fatalf("the pair refused before its mark was not left fresh: %v", err)
	}
	// Reopening keeps the fresh pairs and not the used ones.
	s.Close()
	s2, err := OpenNonceStore(f.d.Shares[0], NonceStoreConfig{FS: &mem})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if s2.Available() != 6 {
		t.Fatalf("after reopen: %d fresh, want 6", s2.Available())
	}
	for _, p := range ps[:2] {
		if err := f.sign(t, s2, p, []byte("again")); !errors.Is(err, ErrNonceUsed) {
			t.Fatalf("used pair after reopen: %v", err)
		}
	}
	for _, p := range ps[2:] {
		if err := f.sign(t, s2, p, []byte("after reopen")); err != nil {
			t.Fatal(err)
		}
	}
	// The file belongs to participant 1 of this key.
	if _, err := OpenNonceStore(f.d.Shares[2], NonceStoreConfig{FS: &mem, Name: "nonces-1"}); !errors.Is(err, signer.ErrInvalidKey) {
		t.Fatalf("another participant's nonce file: %v", err)
	}
}

// TestNonceStoreCrash crashes the store at random syncs, while signs run
// concurrently, and checks on the image the crash leaves that no nonce
// whose share was released is fresh again.
func TestNonceStoreCrash(t *testing.T) {
	f := newNonceFixture(t)
	r := mrand.New(mrand.NewPCG(7, 8))
	for round := range 30 {
		fsys := &crashFS{}
		s, err := OpenNonceStore(f.d.Shares[0], NonceStoreConfig{FS: fsys, Capacity: 32})
		if err != nil {
			t.Fatal(err)
		}
		ps, err := s.Generate(32)
		if err != nil {
			t.Fatal(err)
		}
		crashAt := 1 + r.IntN(24)
		var (
			mu       sync.Mutex
			image    *crashFS
			released = map[NonceHandle]bool{}
		)
		crashed := errors.New("crashed")
		fsys.onSync = func() error {
			mu.Lock()
			defer mu.Unlock()
			if image != nil {
				return crashed
			}
			crashAt--
			if crashAt == 0 {
				image = fsys.crash(r)
				return crashed
			}
			return nil
		}
		var wg sync.WaitGroup
		for i, p := range ps {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, err := s.Sign(p.Handle, []byte(fmt.Sprintf("round %d msg %d", round, i)), f.list(p))
				if err == nil {
					mu.Lock()
					released[p.Handle] = true
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		mu.Lock()
		img := image
		mu.Unlock()
		if img == nil {
			img = fsys.crash(r)
		}
		s.Close()
		s2, err := OpenNonceStore(f.d.Shares[0], NonceStoreConfig{FS: img})
		if err != nil {
			t.Fatalf("round %d: reopen after crash: %v", round, err)
		}
		fresh := map[NonceHandle]bool{}
		for _, p := range s2.Outstanding() {
			fresh[p.Handle] = true
		}
		for h := range released {
			if fresh[h] {
				t.Fatalf("round %d: nonce %#x released a share before the crash and is fresh after it", round, uint64(h))
			}
			p := Presigned{Handle: h, Commitments: commitmentsOf(ps, h)}
			if _, err := s2.Sign(h, []byte("reuse"), f.list(p)); !errors.Is(err, ErrNonceUsed) {
				t.Fatalf("round %d: reuse of %#x after crash: %v", round, uint64(h), err)
			}
		}
		s2.Close()
	}
}

func commitmentsOf(ps []Presigned, h NonceHandle) SigningCommitments {
	for _, p := range ps {
		if p.Handle == h {
			return p.Commitments
		}
	}
	return SigningCommitments{}
}

func TestNonceStoreSyncFailureReleasesNothing(t *testing.T) {
	f := newNonceFixture(t)
	fsys := &crashFS{}
	s, err := OpenNonceStore(f.d.Shares[0], NonceStoreConfig{FS: fsys, Capacity: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ps, err := s.Generate(4)
	if err != nil {
		t.Fatal(err)
	}
	boom := errors.New("EIO")
	fsys.onSync = func() error { return boom }
	err = f.sign(t, s, ps[0], []byte("m"))
	var se *StorageError
	if !errors.As(err, &se) || !errors.Is(err, boom) {
		t.Fatalf("sign with a failing sync: %v, want a *StorageError", err)
	}
	fsys.onSync = nil
	if err := f.sign(t, s, ps[1], []byte("m")); !errors.As(err, &se) {
		t.Fatalf("the store kept signing after a failed sync: %v", err)
	}
	if _, err := s.Generate(1); !errors.As(err, &se) {
		t.Fatalf("the store kept generating after a failed sync: %v", err)
	}
}

func TestNonceStoreDirFS(t *testing.T) {
	f := newNonceFixture(t)
	dir := t.TempDir()
	s, err := OpenNonceStore(f.d.Shares[0], NonceStoreConfig{FS: statefile.Dir(dir), Capacity: 16})
	if err != nil {
		t.Fatal(err)
	}
	ps, err := s.Generate(16)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.sign(t, s, ps[3], []byte("disk")); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s2, err := OpenNonceStore(f.d.Shares[0], NonceStoreConfig{FS: statefile.Dir(dir)})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if s2.Available() != 15 {
		t.Fatalf("%d fresh after reopen, want 15", s2.Available())
	}
	if err := f.sign(t, s2, ps[3], []byte("disk")); !errors.Is(err, ErrNonceUsed) {
		t.Fatalf("reuse after reopen: %v", err)
	}
}

// countingFS counts the writes to its files.
type countingFS struct {
	statefile.MemFS
	writes int
}

func (c *countingFS) Open(name string) (File, error) {
	f, err := c.MemFS.Open(name)
	if err != nil {
		return nil, err
	}
	return &countingFile{File: f, fs: c}, nil
}

type countingFile struct {
	File
	fs *countingFS
}

func (f *countingFile) WriteAt(p []byte, off int64) (int, error) {
	f.fs.writes++
	return f.File.WriteAt(p, off)
}

// TestNonceStoreGenerateRuns: Generate writes a run of adjacent free slots
// in one write, and after signs free scattered slots, a Generate that
// fills them files every pair under its own slot: a reopened store holds
// exactly the pairs outstanding, each signing once with a valid share.
func TestNonceStoreGenerateRuns(t *testing.T) {
	f := newNonceFixture(t)
	fsys := &countingFS{}
	s, err := OpenNonceStore(f.d.Shares[0], NonceStoreConfig{FS: fsys, Capacity: 16})
	if err != nil {
		t.Fatal(err)
	}
	before := fsys.writes
	ps, err := s.Generate(12)
	if err != nil || len(ps) != 12 {
		t.Fatalf("Generate: %d, %v", len(ps), err)
	}
	if w := fsys.writes - before; w != 1 {
		t.Fatalf("12 fresh slots in a new file took %d writes, want 1", w)
	}
	live := map[NonceHandle]SigningCommitments{}
	for _, p := range ps {
		live[p.Handle] = p.Commitments
	}
	for _, i := range []int{1, 2, 5, 9} {
		if err := f.sign(t, s, ps[i], []byte("free a slot")); err != nil {
			t.Fatal(err)
		}
		delete(live, ps[i].Handle)
	}
	more, err := s.Generate(8) // 4 never used, 4 scattered freed
	if err != nil || len(more) != 8 {
		t.Fatalf("Generate: %d, %v", len(more), err)
	}
	for _, p := range more {
		if _, dup := live[p.Handle]; dup {
			t.Fatalf("handle %v handed out twice", p.Handle)
		}
		live[p.Handle] = p.Commitments
	}
	s.Close()
	s2, err := OpenNonceStore(f.d.Shares[0], NonceStoreConfig{FS: fsys})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	out := s2.Outstanding()
	if len(out) != len(live) {
		t.Fatalf("reopened store holds %d pairs, want %d", len(out), len(live))
	}
	for _, p := range out {
		if c, ok := live[p.Handle]; !ok || !c.Equal(p.Commitments) {
			t.Fatalf("reopened pair %v is not the one handed out", p.Handle)
		}
		if err := f.sign(t, s2, p, []byte("after reopen")); err != nil {
			t.Fatal(err)
		}
	}
}

// TestNonceStoreFullAndRelease: a full store once made Generate return
// nothing and no error; it now says so with a *NonceStoreFullError.
// Release and ReleaseOlderThan free slots durably: a released pair is
// never signed with, before or after a reopen.
func TestNonceStoreFullAndRelease(t *testing.T) {
	seed := make([]byte, 32)
	rand.Read(seed)
	d, err := SplitSeed(seed, 2, 3, rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	k1, k2 := d.Shares[0], d.Shares[1]
	fsys := &statefile.MemFS{}
	st, err := OpenNonceStore(k1, NonceStoreConfig{FS: fsys, Capacity: 4})
	if err != nil {
		t.Fatal(err)
	}
	ps, err := st.Generate(4)
	if err != nil || len(ps) != 4 {
		t.Fatalf("Generate(4): %d, %v", len(ps), err)
	}
	_, err = st.Generate(1)
	var full *NonceStoreFullError
	if !errors.As(err, &full) || !errors.Is(err, signer.ErrBusy) || full.Capacity != 4 || full.Fresh != 4 {
		t.Fatalf("Generate on a full store: %v, want a *NonceStoreFullError", err)
	}
	if got := st.Stats(); got != (NonceStats{Capacity: 4, Fresh: 4, Free: 0}) {
		t.Fatalf("stats %+v", got)
	}
	n, err := st.Release(ps[0].Handle, ps[1].Handle, ps[1].Handle, NonceHandle(1<<40))
	if err != nil || n != 2 {
		t.Fatalf("Release: %d, %v", n, err)
	}
	if got := st.Stats(); got.Fresh != 2 || got.Free != 2 {
		t.Fatalf("stats after release %+v", got)
	}
	other, _ := Commit(k2, rand.Reader)
	list := []SigningCommitments{ps[0].Commitments, other.Commitments()}
	SortCommitments(list)
	if _, err := st.Sign(ps[0].Handle, []byte("m"), list); !errors.Is(err, ErrNonceUsed) {
		t.Fatalf("signing with a released pair: %v, want ErrNonceUsed", err)
	}
	more, err := st.Generate(4)
	if err != nil || len(more) != 2 {
		t.Fatalf("Generate after release: %d, %v", len(more), err)
	}
	st.Close()
	// After a reopen the released pairs are not fresh; the others are,
	// and ReleaseOlderThan(0) releases them all.
	st, err = OpenNonceStore(k1, NonceStoreConfig{FS: fsys})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, ok := st.Lookup(ps[0].Handle); ok {
		t.Fatal("a released pair is fresh after a reopen")
	}
	if got := st.Stats(); got.Fresh != 4 || got.Free != 0 {
		t.Fatalf("stats after reopen %+v", got)
	}
	if n, err := st.ReleaseOlderThan(time.Hour); err != nil || n != 0 {
		t.Fatalf("ReleaseOlderThan(1h): %d, %v", n, err)
	}
	if n, err := st.ReleaseOlderThan(0); err != nil || n != 4 {
		t.Fatalf("ReleaseOlderThan(0): %d, %v", n, err)
	}
	if got := st.Stats(); got.Fresh != 0 || got.Free != 4 {
		t.Fatalf("stats after reclaim %+v", got)
	}
}

// TestNonceStoreGate checks SignAmongGated: the gate runs while the pair's
// consumed mark syncs (the sync below waits for the gate to start, which
// a gate run after the sync would never do), a share comes back only when
// both succeed and verifies in the aggregate, and a gate or sync that
// fails returns no share and leaves the pair consumed.
func TestNonceStoreGate(t *testing.T) {
	f := newNonceFixture(t)
	fsys := &crashFS{}
	s, err := OpenNonceStore(f.d.Shares[0], NonceStoreConfig{FS: fsys, Capacity: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ps, err := s.Generate(4)
	if err != nil {
		t.Fatal(err)
	}
	msg := []byte("gated")
	gateStarted := make(chan struct{})
	fsys.onSync = func() error {
		select {
		case <-gateStarted:
			return nil
		case <-time.After(10 * time.Second):
			return errors.New("the gate did not start while the mark was syncing")
		}
	}
	n2, _ := Commit(f.other, rand.Reader)
	others := []SigningCommitments{n2.Commitments()}
	sh1, err := s.SignAmongGated(ps[0].Handle, msg, others, func() error {
		if _, fresh := s.Lookup(ps[0].Handle); fresh {
			t.Error("the gate ran before the pair was marked consumed")
		}
		close(gateStarted)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	list := []SigningCommitments{ps[0].Commitments, n2.Commitments()}
	SortCommitments(list)
	sh2, err := Sign(f.other, n2, msg, list)
	if err != nil {
		t.Fatal(err)
	}
	sig, err := Aggregate(f.d.Public, msg, list, []SignatureShare{sh1, sh2})
	if err != nil || !ed25519.Verify(f.d.Public.GroupPublicKey(), msg, sig) {
		t.Fatalf("the gated share does not make a valid signature: %v", err)
	}
	fsys.onSync = nil
	// A pair used already is refused before its gate runs: a party's
	// guard records nothing for it.
	if _, err := s.SignAmongGated(ps[0].Handle, msg, others, func() error {
		t.Error("the gate ran for a pair used already")
		return nil
	}); !errors.Is(err, ErrNonceUsed) {
		t.Fatalf("a used pair under a gate: %v, want ErrNonceUsed", err)
	}

	refused := errors.New("refused by the gate")
	sh, err := s.SignAmongGated(ps[1].Handle, msg, others, func() error { return refused })
	if !errors.Is(err, refused) || sh.Z != nil {
		t.Fatalf("a failing gate: share %v, err %v; want no share and the gate's error", sh.Z, err)
	}
	if _, fresh := s.Lookup(ps[1].Handle); fresh {
		t.Fatal("the pair is fresh again after its gate failed")
	}
	boom := errors.New("EIO")
	fsys.onSync = func() error { return boom }
	var se *StorageError
	sh, err = s.SignAmongGated(ps[2].Handle, msg, others, func() error { return nil })
	if !errors.As(err, &se) || sh.Z != nil {
		t.Fatalf("a failing sync under a gate that passed: share %v, err %v; want no share and a *StorageError", sh.Z, err)
	}
}
