package guard

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"syscall"
	"testing"
	"time"

	"github.com/signerkit/signerkit/signbytes"
	"github.com/signerkit/signerkit/signer/signertest"
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

// FuzzNoDoubleSign runs random sign sequences through Guards on one
// state file, with restarts, random damage to the file between them
// (bit flips, truncation) and writes a power cut tears at any byte (their
// sign fails) and, where the Guard
// refuses a damaged file, the operator's Repair at one more than the
// highest height the validator signed. Its invariant: no two different
// messages are ever released for one height, round and step, and every
// released signature verifies.
//
// Each input is a program, three bytes an operation: an opcode and two
// operands.
func FuzzNoDoubleSign(f *testing.F) {
	f.Add([]byte{0, 1, 0, 0, 2, 0, 4, 0, 0, 0, 2, 1})
	f.Add([]byte{0, 2, 0, 0, 3, 0, 5, 0x20, 0x10, 0, 2, 1, 6, 0, 0, 0, 3, 0})
	f.Add([]byte{0, 3, 0, 7, 0, 0, 0, 4, 1, 5, 0x01, 0x02, 0, 4, 1, 6, 0, 0, 0, 4, 2})
	f.Add([]byte{0, 1, 0, 0, 2, 0, 0, 3, 0, 9, 0, 0, 4, 0, 0, 0, 2, 1})
	f.Add([]byte{4, 1, 0, 0, 1, 0, 4, 0, 0, 0, 1, 0, 0, 1, 6, 6, 2, 100, 4, 1, 0, 0, 2, 0})
	f.Fuzz(func(t *testing.T, prog []byte) { runDoubleSignProgram(t, prog) })
}

// programStats counts what a FuzzNoDoubleSign program did.
type programStats struct{ signs, restarts, aheadRestarts, repairs int }

// runDoubleSignProgram is FuzzNoDoubleSign's body.
func runDoubleSignProgram(t *testing.T, prog []byte) (out programStats) {
	const chain = "fuzz-ds"
	ctx := context.Background()
	pub := fuzzKey.Public().(ed25519.PublicKey)
	fsys := memFS{}
	ffs := &faultFS{FS: fsys}
	name := stateFileName(chain)
	writeAhead := false // a restart's first operand chooses Config.WriteAhead
	open := func() *Guard {
		// Closing a Guard closes its signer: each gets its own.
		g, err := New(signertest.NewFakeKey(fuzzKey), Config{FS: ffs, WriteAhead: writeAhead})
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	var g *Guard
	released := map[[3]int64][]byte{} // height, round, step → sign bytes
	var top int64                     // the highest height released
	// sign asks for a vote or proposal: height 1-8 and round 0-1 from a;
	// step, block and timestamp from b. A released signature is checked.
	sign := func(a, b byte) {
		h, r := int64(1+a%8), int64(a/8%2)
		phase := signbytes.Phase(1 + b%3)
		req := msg(t, signbytes.CometBFT, chain, phase, h, r, 1+b/3%2, baseTime.Add(time.Duration(b/6%2)*time.Second))
		s, err := g.SignBytes(ctx, req)
		if err != nil {
			return
		}
		if !ed25519.Verify(pub, s.SignBytes, s.Signature) {
			t.Fatalf("released signature does not verify")
		}
		m, err := signbytes.Parse(s.SignBytes)
		if err != nil {
			t.Fatal(err)
		}
		k := [3]int64{m.Height, m.Round, int64(m.Step())}
		if prev, ok := released[k]; ok && !bytes.Equal(prev, s.SignBytes) {
			t.Fatalf("two messages released at %v:\n%x\n%x", k, prev, s.SignBytes)
		}
		released[k] = s.SignBytes
		top = max(top, m.Height)
		out.signs++
	}
	g = open()
	if err := g.Init(ctx, chain, 1); err != nil {
		t.Fatal(err)
	}
	// 64 operations at most: long programs add little but slow the fuzzer.
	prog = prog[:min(len(prog), 3*64)]
	for len(prog) >= 3 {
		op, a, b := prog[0], prog[1], prog[2]
		prog = prog[3:]
		switch op % 8 {
		case 0, 1, 2, 3:
			sign(a, b)
		case 4: // restart, writing ahead (Config.WriteAhead) when a is odd
			g.Close()
			writeAhead = a%2 == 1
			g = open()
			out.restarts++
			if writeAhead {
				out.aheadRestarts++
			}
		case 5: // flip a bit, the Guard stopped
			g.Close()
			if file := fsys[name]; len(file) > 0 {
				pos := (int(a)<<8 | int(b)) % (len(file) * 8)
				file[pos/8] ^= 1 << (pos % 8)
			}
			g = open()
		case 6: // a sign whose write a power cut tears at a byte: it fails, then a restart
			out.restarts++
			ffs.mu.Lock()
			ffs.writeErr, ffs.tornBytes = syscall.EIO, int(b)*16%slotSize
			ffs.mu.Unlock()
			sign(a, b/16)
			ffs.mu.Lock()
			ffs.writeErr, ffs.tornBytes = nil, 0
			ffs.mu.Unlock()
			g.Close()
			g = open()
		case 7: // truncate, or repair as the operator does
			if a%2 == 0 {
				g.Close()
				if file := fsys[name]; len(file) > 0 {
					fsys[name] = file[:int(b)*len(file)/256]
				}
				g = open()
				continue
			}
			if _, err := g.State(ctx, chain); errors.As(err, new(*CorruptError)) {
				rep, err := Inspect(fsys, chain)
				if err != nil {
					t.Fatal(err)
				}
				h := max(top, rep.RepairAbove) + 1
				if _, err := g.Repair(ctx, chain, h); err != nil {
					t.Fatalf("Repair at %d: %v", h, err)
				}
				out.repairs++
			}
		}
	}
	g.Close()
	return out
}

// TestDoubleSignProgram checks that the fuzz target's operations do what
// they say: signs after a restart and after a repair are released, so
// the invariant is checked on them too.
func TestDoubleSignProgram(t *testing.T) {
	prog := []byte{
		0, 1, 0, // prevote at 2
		4, 0, 0, // restart
		0, 2, 2, // precommit at 3
		5, 0x00, 0x40, // flip bit 64 (slot 0's sequence number)
		0, 3, 0, // prevote at 4: refused, the file is damaged
		7, 1, 0, // repair above every height signed
		0, 5, 0, // prevote at 6
		6, 6, 100, // prevote at 7, its write torn at byte 1600: not released
		0, 6, 0, // prevote at 7: refused, the torn slot
		7, 1, 0, // repair
		0, 7, 1, // precommit at 8
	}
	st := runDoubleSignProgram(t, prog)
	if st.signs != 4 || st.restarts != 2 || st.repairs != 2 {
		t.Fatalf("%+v, want 4 signs, 2 restarts, 2 repairs", st)
	}
	// The same with the Guards after the first restart writing ahead, and
	// a restart back to writing after the sign: records without their
	// signature are read by both kinds.
	ahead := append([]byte(nil), prog...)
	ahead[3+1] = 1 // the restart writes ahead
	ahead = append(ahead,
		0, 7, 1, // precommit at 8 again: signed again from the record
		4, 0, 0, // restart, not writing ahead
		0, 7, 1, // the same precommit, from a record without its signature
		0, 7, 7, // the same with another timestamp: the recorded one signed
		0, 7, 4, // a precommit for another block at 8/0: refused
	)
	st = runDoubleSignProgram(t, ahead)
	if st.signs != 7 || st.restarts != 3 || st.aheadRestarts != 1 || st.repairs != 2 {
		t.Fatalf("%+v, want 7 signs, 3 restarts (1 writing ahead), 2 repairs", st)
	}
}

// fuzzKey is FuzzNoDoubleSign's validator key, made once.
var fuzzKey = ed25519.NewKeyFromSeed(bytes.Repeat([]byte{9}, ed25519.SeedSize))
