// Package memscan searches the process's own memory for byte patterns,
// for tests that check that a secret left no copy behind: live objects,
// freed memory that still holds old bytes, goroutine stacks, everything
// mapped readable. It reads /proc/self/maps and /proc/self/mem, so it
// works on Linux only.
package memscan

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"unsafe"
)

// ErrUnsupported is returned where the process cannot read its own memory.
var ErrUnsupported = errors.New("memscan: needs /proc/self/mem (Linux)")

// Pattern is a needle held complemented, so that the pattern's bytes
// themselves are nowhere in memory because of the search.
type Pattern struct {
	Name string
	inv  []byte
}

// NewPattern makes a Pattern of b, which the caller then wipes.
func NewPattern(name string, b []byte) Pattern {
	inv := make([]byte, len(b))
	for i, c := range b {
		inv[i] = ^c
	}
	return Pattern{Name: name, inv: inv}
}

// Count returns how often each pattern occurs in the readable memory of
// the process. An occurrence in memory the scan itself copied is counted
// again only if it was copied between the scan's reads; the scan's own
// buffer is skipped.
func Count(ps ...Pattern) ([]int, error) {
	if runtime.GOOS != "linux" {
		return nil, ErrUnsupported
	}
	maps, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUnsupported, err)
	}
	mem, err := os.Open("/proc/self/mem")
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUnsupported, err)
	}
	defer mem.Close()
	longest := 0
	for _, p := range ps {
		longest = max(longest, len(p.inv))
	}
	counts := make([]int, len(ps))
	buf := make([]byte, 1<<20)
	bufStart := uint64(uintptr(unsafe.Pointer(&buf[0])))
	bufEnd := bufStart + uint64(len(buf))
	sc := bufio.NewScanner(bytes.NewReader(maps))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 2 || f[1][0] != 'r' {
			continue
		}
		if len(f) >= 6 && (f[5] == "[vvar]" || f[5] == "[vsyscall]" || f[5] == "[vvar_vclock]") {
			continue
		}
		lo, hi, ok := strings.Cut(f[0], "-")
		if !ok {
			continue
		}
		start, err1 := strconv.ParseUint(lo, 16, 64)
		end, err2 := strconv.ParseUint(hi, 16, 64)
		if err1 != nil || err2 != nil || end <= start {
			continue
		}
		// Read in chunks that overlap by the longest pattern less one.
		for off := start; off < end; {
			n := min(uint64(len(buf)), end-off)
			m, _ := mem.ReadAt(buf[:n], int64(off))
			if m <= 0 {
				break
			}
			// Reading the scan's own buffer gives back the previous chunk,
			// already counted: blank that part out.
			chunk := buf[:m]
			if lo, hi := max(off, bufStart), min(off+uint64(m), bufEnd); lo < hi {
				for i, p := range ps {
					counts[i] += count(chunk[:lo-off], p.inv) + count(chunk[hi-off:], p.inv)
				}
			} else {
				for i, p := range ps {
					counts[i] += count(chunk, p.inv)
				}
			}
			if uint64(m) < n || off+uint64(m) >= end {
				break
			}
			off += uint64(m) - uint64(longest-1)
		}
	}
	clear(buf)
	return counts, sc.Err()
}

// count returns the occurrences of the complement of inv in b.
func count(b, inv []byte) int {
	if len(inv) == 0 {
		return 0
	}
	first := ^inv[0]
	n := 0
	for i := 0; i+len(inv) <= len(b); {
		j := bytes.IndexByte(b[i:len(b)-len(inv)+1], first)
		if j < 0 {
			break
		}
		i += j
		match := true
		for k := 1; k < len(inv); k++ {
			if b[i+k] != ^inv[k] {
				match = false
				break
			}
		}
		if match {
			n++
		}
		i++
	}
	return n
}
