package guard

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"sync"
	"testing"
	"time"

	"github.com/signerkit/signerkit/signbytes"
	"github.com/signerkit/signerkit/signer/signertest"
)

// newKey returns a fake Ed25519 signer whose seed is seed repeated.
func newKey(seed byte) *signertest.Fake { return signertest.NewFake(seed) }

// faultFS wraps an FS and fails writes or syncs on demand.
type faultFS struct {
	FS
	mu        sync.Mutex
	writeErr  error // returned by the next WriteAt
	tornBytes int   // with writeErr: bytes written before failing
	syncErr   error // returned by the next Sync
	createErr error
	writes    int
	syncs     int
}

func (f *faultFS) Open(name string) (File, error) {
	file, err := f.FS.Open(name)
	if err != nil {
		return nil, err
	}
	return &faultFile{File: file, fs: f}, nil
}

func (f *faultFS) Create(name string, data []byte) error {
	f.mu.Lock()
	err := f.createErr
	f.mu.Unlock()
	if err != nil {
		return err
	}
	return f.FS.Create(name, data)
}

type faultFile struct {
	File
	fs *faultFS
}

func (f *faultFile) WriteAt(p []byte, off int64) (int, error) {
	f.fs.mu.Lock()
	err, torn := f.fs.writeErr, f.fs.tornBytes
	f.fs.writeErr, f.fs.tornBytes = nil, 0
	f.fs.writes++
	f.fs.mu.Unlock()
	if err != nil {
		n, _ := f.File.WriteAt(p[:torn], off)
		return n, err
	}
	return f.File.WriteAt(p, off)
}

func (f *faultFile) Sync() error {
	f.fs.mu.Lock()
	err := f.fs.syncErr
	f.fs.syncErr = nil
	f.fs.syncs++
	f.fs.mu.Unlock()
	if err != nil {
		return err
	}
	return f.File.Sync()
}

var baseTime = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

func blockID(tag byte) signbytes.BlockID {
	return signbytes.BlockID{Hash: bytes.Repeat([]byte{tag}, 32), PartSetHeader: signbytes.PartSetHeader{Total: 1, Hash: bytes.Repeat([]byte{tag ^ 0xff}, 32)}}
}

// msg builds sign bytes; block is the block id's byte (0 for nil).
func msg(t testing.TB, f signbytes.Format, chainID string, phase signbytes.Phase, h, r int64, block byte, ts time.Time) []byte {
	t.Helper()
	m := signbytes.Message{Format: f, Phase: phase, Height: h, Round: r, Timestamp: ts, ChainID: chainID}
	if block != 0 {
		m.BlockID = blockID(block)
	}
	if phase == signbytes.Proposal {
		m.POLRound = -1
	}
	if phase == signbytes.VoteExtension {
		m.BlockID, m.Timestamp, m.Extension = signbytes.BlockID{}, time.Time{}, []byte{block}
	}
	b, err := m.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func mustErr(t testing.TB, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("error %v, want one wrapping %v", err, target)
	}
}

// memFS is an FS in memory whose Sync costs nothing: the benchmarks'
// baseline, and the fuzz test's file system.
type memFS map[string][]byte

func (m memFS) Open(name string) (File, error) {
	if _, ok := m[name]; !ok {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	}
	return &memFile{m, name}, nil
}

func (m memFS) Create(name string, data []byte) error {
	if _, ok := m[name]; ok {
		return &fs.PathError{Op: "create", Path: name, Err: fs.ErrExist}
	}
	m[name] = bytes.Clone(data)
	return nil
}

type memFile struct {
	m    memFS
	name string
}

func (f *memFile) ReadAt(p []byte, off int64) (int, error) {
	b := f.m[f.name]
	if off >= int64(len(b)) {
		return 0, io.EOF
	}
	n := copy(p, b[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

func (f *memFile) WriteAt(p []byte, off int64) (int, error) {
	b := f.m[f.name]
	if need := int(off) + len(p); need > len(b) {
		b = append(b, make([]byte, need-len(b))...)
	}
	copy(b[off:], p)
	f.m[f.name] = b
	return len(p), nil
}

func (f *memFile) Sync() error  { return nil }
func (f *memFile) Close() error { return nil }
