package pbwire

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"testing"
)

// naive nests the classic way: the message in a buffer of its own, then
// key, length and bytes.
func naive(prefix []byte, field int, msg []byte) []byte {
	b := binary.AppendUvarint(bytes.Clone(prefix), uint64(field)<<3|wireBytes)
	b = binary.AppendUvarint(b, uint64(len(msg)))
	return append(b, msg...)
}

func check(t *testing.T, prefix []byte, field int, msg []byte) {
	t.Helper()
	b, start := Begin(bytes.Clone(prefix), field)
	b = append(b, msg...)
	if got, want := End(b, start), naive(prefix, field, msg); !bytes.Equal(got, want) {
		t.Fatalf("field %d, %d-byte message after %d bytes:\n got %x\nwant %x", field, len(msg), len(prefix), got, want)
	}
}

func TestEndMatchesNaive(t *testing.T) {
	for _, n := range []int{0, 1, 127, 128, 129, 300, 16383, 16384, 70000} {
		msg := make([]byte, n) // bytes that differ, so a misplaced copy shows
		for i := range msg {
			msg[i] = byte(i*7 + i>>8)
		}
		for _, field := range []int{1, 15, 16, 2047} {
			check(t, nil, field, msg)
			check(t, []byte{1, 2, 3}, field, msg)
		}
	}
}

func FuzzEnd(f *testing.F) {
	f.Add([]byte{9}, uint16(1), []byte("x"))
	f.Add([]byte{}, uint16(300), bytes.Repeat([]byte{7}, 200))
	f.Fuzz(func(t *testing.T, prefix []byte, field uint16, msg []byte) {
		check(t, prefix, int(field)+1, msg)
	})
}

// Example nests a message of one varint field (field 1 = 150) as field 3:
// 1a 03 08 96 01.
func Example() {
	b, start := Begin(nil, 3)
	b = append(b, 0x08, 0x96, 0x01)
	b = End(b, start)
	fmt.Printf("% x\n", b)
	// Output: 1a 03 08 96 01
}
