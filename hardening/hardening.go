// Package hardening offers process hardening for programs that hold
// signing keys in memory: DisableCoreDumps keeps the kernel from writing
// the process's memory to a core file (and, on Linux, keeps other
// processes of the same user from attaching to it or reading
// /proc/<pid>/mem), and Alloc returns memory for key material that lives
// outside the Go heap, is locked into RAM (mlock, so it is never written
// to swap) and is left out of core dumps (MADV_DONTDUMP on Linux,
// MADV_NOCORE on FreeBSD), wherever the operating system allows.
//
// What each system gets:
//
//	                  DisableCoreDumps                 Alloc
//	Linux             RLIMIT_CORE 0, PR_SET_DUMPABLE 0  mmap, mlock, MADV_DONTDUMP
//	FreeBSD           RLIMIT_CORE 0                     mmap, mlock, MADV_NOCORE
//	macOS             RLIMIT_CORE 0                     mmap, mlock
//	others (Windows)  ErrUnsupported                    Go heap memory, not locked
//
// Everything here is best effort and never fails a caller that goes on
// without it: mlock fails beyond RLIMIT_MEMLOCK (often 64 KiB or 8 MiB
// for an unprivileged user; one Alloc takes at least one page), and a
// Buffer then still lives outside the Go heap and out of core dumps but
// is not locked (Buffer.Locked says which). Alloc never returns an error.
//
// The package needs no cgo: CGO_ENABLED=0 builds have all of it.
package hardening

import (
	"errors"
	"runtime"
)

// ErrUnsupported is returned by DisableCoreDumps on systems where it
// cannot be done.
var ErrUnsupported = errors.New("hardening: not supported on " + runtime.GOOS)

// Buffer is memory for key material from Alloc. Free wipes and releases
// it; a Buffer that is not freed stays mapped for the process's life.
type Buffer struct {
	b      []byte
	pages  []byte // the whole mapping, when mapped
	mapped bool   // from mmap: Free unmaps
	locked bool   // mlock succeeded
	dump   bool   // left out of core dumps
}

// Bytes returns the buffer's memory (nil after Free). Never keep a slice
// of it past Free: on most systems its pages are then unmapped, and
// touching them crashes the process.
func (b *Buffer) Bytes() []byte { return b.b }

// Locked reports whether the buffer is locked in RAM (mlock), so never
// swapped out.
func (b *Buffer) Locked() bool { return b.locked }

// NoDump reports whether the buffer is left out of core dumps.
func (b *Buffer) NoDump() bool { return b.dump }

// Alloc returns a zeroed Buffer of n bytes (n > 0) for key material:
// whole pages mapped outside the Go heap, locked in RAM and left out of
// core dumps where the system allows, or, where it does not or mapping
// fails, ordinary Go memory. The Go garbage collector does not scan the
// memory: it must hold no Go pointers.
func Alloc(n int) *Buffer {
	if n <= 0 {
		panic("hardening: Alloc of a non-positive size")
	}
	if b := allocPages(n); b != nil {
		return b
	}
	return &Buffer{b: make([]byte, n)}
}

// Free wipes the buffer and releases it: unlocked and unmapped if it
// was mapped. It is idempotent.
func (b *Buffer) Free() {
	if b == nil || b.b == nil {
		return
	}
	wipe(b.b)
	if b.mapped {
		wipe(b.pages)
		freePages(b)
	}
	b.b, b.pages, b.mapped, b.locked, b.dump = nil, nil, false, false, false
}

// wipe zeroes b through a call the compiler cannot drop as a dead store.
//
//go:noinline
func wipe(b []byte) {
	clear(b)
}
