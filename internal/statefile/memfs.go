package statefile

import (
	"bytes"
	"io"
	"io/fs"
	"sync"
)

// MemFS is an FS in memory, for tests and benchmarks: nothing it holds
// survives the process, and its Sync does nothing, so state kept in it is
// not durable. The zero value is an empty FS. It is safe for concurrent
// use.
type MemFS struct {
	mu    sync.Mutex
	files map[string]*memFSFile
}

type memFSFile struct {
	mu   sync.Mutex
	data []byte
}

// Open returns the file name, or an error wrapping fs.ErrNotExist.
func (m *MemFS) Open(name string) (File, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if f := m.files[name]; f != nil {
		return f, nil
	}
	return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
}

// Create makes the file name holding data, or returns an error wrapping
// fs.ErrExist.
func (m *MemFS) Create(name string, data []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.files == nil {
		m.files = map[string]*memFSFile{}
	}
	if m.files[name] != nil {
		return &fs.PathError{Op: "create", Path: name, Err: fs.ErrExist}
	}
	m.files[name] = &memFSFile{data: bytes.Clone(data)}
	return nil
}

func (f *memFSFile) ReadAt(p []byte, off int64) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if off >= int64(len(f.data)) {
		return 0, io.EOF
	}
	n := copy(p, f.data[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

func (f *memFSFile) WriteAt(p []byte, off int64) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if end := off + int64(len(p)); end > int64(len(f.data)) {
		f.data = append(f.data, make([]byte, end-int64(len(f.data)))...)
	}
	return copy(f.data[off:], p), nil
}

func (f *memFSFile) Sync() error  { return nil }
func (f *memFSFile) Close() error { return nil }
