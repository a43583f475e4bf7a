package guard

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"testing"
	"time"

	"github.com/signerkit/signerkit/signbytes"
)

// FuzzDecodeState feeds the state-file decoder damaged files. The input
// replaces the start of slot 0 of a valid file (or is the whole file when
// it is exactly a file long); fixCRC recomputes slot 0's checksum so that
// the checks behind it are reached. The decoder must never panic, and a
// record it accepts must encode back to the slot it came from.
func FuzzDecodeState(f *testing.F) {
	const id = "fuzz-chain"
	valid := func(h int64, step int8, sb []byte) []byte {
		r := record{Seq: 7, ChainID: id, Height: h, Step: step, SignBytes: sb}
		if sb != nil {
			r.Signature = bytes.Repeat([]byte{9}, 64)
		}
		s := r
		s.Seq = 8
		return append(r.encode(), s.encode()...)
	}
	vote := msg(f, signbytes.TM2, id, signbytes.Prevote, 5, 0, 1, time.Unix(1777636800, 0))
	base := valid(5, 2, vote)
	f.Add(base, false)
	f.Add(base[:slotSize], true)
	f.Add(valid(3, 0, nil), false)
	f.Add([]byte{}, true)
	f.Add([]byte(recordMagic), true)
	f.Fuzz(func(t *testing.T, data []byte, fixCRC bool) {
		file := data
		if len(data) != fileSize {
			file = bytes.Clone(base)
			copy(file[:crcOffset], data)
			if fixCRC {
				binary.LittleEndian.PutUint32(file[crcOffset:], crc32.Checksum(file[:crcOffset], castagnoli))
			}
		}
		rec, slot, err := decodeFile(file, id)
		if err != nil {
			return
		}
		if got := rec.encode(); !bytes.Equal(got, file[slot*slotSize:(slot+1)*slotSize]) {
			t.Fatalf("accepted record %+v does not encode back to its slot", rec)
		}
		if rec.ChainID != id || rec.Height < 0 || rec.Step > 3 {
			t.Fatalf("accepted a bad record %+v", rec)
		}
		// Through the guard, a loaded file gives a state or a typed error.
		fsys := memFS{"fuzz-chain.signstate": bytes.Clone(file)}
		g, _ := New(newKey(1), Config{FS: fsys})
		defer g.Close()
		if _, err := g.State(t.Context(), id); err != nil {
			var ce *CorruptError
			if !errors.As(err, &ce) {
				t.Fatalf("State: %v", err)
			}
		}
	})
}
