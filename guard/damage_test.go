package guard

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/signerkit/signerkit/signbytes"
	"github.com/signerkit/signerkit/signer"
)

// damageChain is the chain of the damage tests; its state file holds
// prevote 7/0 in one slot and precommit 7/0 in the other.
const damageChain = "damage-chain"

// damagedFixture signs up to precommit 7/0 and returns the file, the two
// messages held, and the slot of the newer.
func damagedFixture(t testing.TB) (file []byte, prevote, precommit []byte, newer int) {
	t.Helper()
	ctx := context.Background()
	fsys := memFS{}
	g := newGuard(t, newKey(3), Config{FS: fsys, AutoInit: true})
	prevote = msg(t, signbytes.CometBFT, damageChain, signbytes.Prevote, 7, 0, 0x11, baseTime)
	precommit = msg(t, signbytes.CometBFT, damageChain, signbytes.Precommit, 7, 0, 0x11, baseTime)
	for _, b := range [][]byte{prevote, precommit} {
		if _, err := g.SignBytes(ctx, b); err != nil {
			t.Fatal(err)
		}
	}
	g.Close()
	file = bytes.Clone(fsys[stateFileName(damageChain)])
	_, newer, err := decodeFile(file, damageChain)
	if err != nil {
		t.Fatal(err)
	}
	return file, prevote, precommit, newer
}

// checkImage opens a Guard on image and checks it either refuses with a
// *CorruptError (without signing or writing) or signs from exactly the
// state want, refusing conflicts at want and below. It returns whether it
// refused.
func checkImage(t *testing.T, where string, image []byte, want State) bool {
	t.Helper()
	ctx := context.Background()
	fsys := memFS{stateFileName(damageChain): bytes.Clone(image)}
	key := newKey(3)
	g, err := New(key, Config{FS: fsys})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	st, err := g.State(ctx, damageChain)
	// Refused, nothing signs, not even far above; else a conflicting
	// message at the state's height/round/step and, after a precommit, a
	// conflicting prevote below it are refused.
	probes := [][]byte{msg(t, signbytes.CometBFT, damageChain, signbytes.Precommit, want.Height+1000, 0, 0x99, baseTime)}
	if err == nil && want.Step != 0 {
		probes = [][]byte{msg(t, signbytes.CometBFT, damageChain, signbytes.Phase(want.Step), want.Height, want.Round, 0x99, baseTime)}
		if want.Step == signbytes.Precommit.Step() {
			probes = append(probes, msg(t, signbytes.CometBFT, damageChain, signbytes.Prevote, want.Height, want.Round, 0x99, baseTime))
		}
	}
	if err != nil {
		var ce *CorruptError
		if !errors.As(err, &ce) || !errors.Is(err, signer.ErrCorrupt) {
			t.Fatalf("%s: %v, want a *CorruptError", where, err)
		}
		for _, b := range probes {
			if _, err := g.SignBytes(ctx, b); !errors.As(err, &ce) {
				t.Fatalf("%s: sign on a refused file: %v", where, err)
			}
		}
		if key.Signs() != 0 || !bytes.Equal(fsys[stateFileName(damageChain)], image) {
			t.Fatalf("%s: a refused file was signed from or written", where)
		}
		return true
	}
	if st.Height != want.Height || st.Round != want.Round || st.Step != want.Step || !bytes.Equal(st.SignBytes, want.SignBytes) {
		t.Fatalf("%s: signs from %d/%d/%d, want the last durable %d/%d/%d", where, st.Height, st.Round, st.Step, want.Height, want.Round, want.Step)
	}
	if want.Step == 0 {
		return false
	}
	for _, b := range probes {
		if _, err := g.SignBytes(ctx, b); !errors.As(err, new(*DoubleSignError)) {
			t.Fatalf("%s: a conflict at or below %d/%d/%d: %v", where, want.Height, want.Round, want.Step, err)
		}
	}
	return false
}

// TestEveryBitFlip flips each bit of each slot of a state file, one at a
// time, and checks that every one of the 65,536 images is refused: the
// Guard never falls back to the other slot, the older state, from which
// it would sign a conflicting message. (Before, it did: a flip in the
// newer slot made it sign a second prevote at 7/0.)
func TestEveryBitFlip(t *testing.T) {
	t.Parallel()
	file, _, precommit, newer := damagedFixture(t)
	want := State{ChainID: damageChain, Height: 7, Step: 3, SignBytes: precommit}
	stride := 1
	if testing.Short() || raceEnabled {
		stride = 61 // a prime: every bit position of a byte is still hit
	}
	refused, n := 0, 0
	for slot := range 2 {
		for bit := 0; bit < slotSize*8; bit += stride {
			img := bytes.Clone(file)
			img[slot*slotSize+bit/8] ^= 1 << (bit % 8)
			// decodeFile, the whole decision, on every image.
			_, _, err := decodeFile(img, damageChain)
			var ce *CorruptError
			if !errors.As(err, &ce) || len(ce.Slots) != 1 || ce.Slots[0] != slot {
				t.Fatalf("slot %d (newer %d) bit %d flipped: %v, want a refusal naming slot %d", slot, newer, bit, err, slot)
			}
			// And the Guard itself on every 8th.
			if bit%8 == slot {
				if !checkImage(t, fmt.Sprintf("slot %d bit %d", slot, bit), img, want) {
					t.Fatalf("slot %d bit %d: not refused", slot, bit)
				}
				refused++
			}
			n++
		}
	}
	t.Logf("%d images refused by decodeFile, %d through a Guard", n, refused)
}

// TestTornAndTruncated tears the write of each sign at every byte and at
// every 512-byte sector subset of its slot, and truncates the file at
// every length: each image is refused, or signs from the state before the
// write or the one it wrote, never an older one.
func TestTornAndTruncated(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	fsys := memFS{}
	g := newGuard(t, newKey(3), Config{FS: fsys})
	if err := g.Init(ctx, damageChain, 5); err != nil {
		t.Fatal(err)
	}
	stride := 1
	if testing.Short() || raceEnabled {
		stride = 13
	}
	counts := map[string]int{}
	for i, step := range []signbytes.Phase{signbytes.Proposal, signbytes.Prevote, signbytes.Precommit, signbytes.Prevote} {
		h := int64(5 + i/3)
		b := msg(t, signbytes.CometBFT, damageChain, step, h, 0, 0x21, baseTime)
		before := bytes.Clone(fsys[stateFileName(damageChain)])
		if _, err := g.SignBytes(ctx, b); err != nil {
			t.Fatal(err)
		}
		after := fsys[stateFileName(damageChain)]
		cur := State{ChainID: damageChain, Height: h, Step: step.Step(), SignBytes: b}
		prevRec, slot, err := decodeFile(before, damageChain)
		if err != nil {
			t.Fatal(err)
		}
		prev := State{ChainID: damageChain, Height: prevRec.Height, Round: prevRec.Round, Step: prevRec.Step, SignBytes: prevRec.SignBytes}
		off := (1 - slot) * slotSize // the slot the write went to
		check := func(where string, img []byte) {
			want := prev
			if _, _, err := decodeFile(img, damageChain); err == nil {
				if r, _, _ := decodeFile(img, damageChain); r.Height == cur.Height && r.Step == cur.Step {
					want = cur
				}
			}
			if checkImage(t, where, img, want) {
				counts["refused"]++
			} else {
				counts["signed from "+map[bool]string{true: "the new state", false: "the previous state"}[want.Step == cur.Step && want.Height == cur.Height]]++
			}
		}
		for k := 0; k <= slotSize; k += stride {
			img := bytes.Clone(before)
			copy(img[off:off+k], after[off:off+k])
			check(fmt.Sprintf("sign %d torn at byte %d", i, k), img)
		}
		for mask := 0; mask < 1<<(slotSize/512); mask++ {
			img := bytes.Clone(before)
			for s := range slotSize / 512 {
				if mask&(1<<s) != 0 {
					copy(img[off+s*512:off+(s+1)*512], after[off+s*512:off+(s+1)*512])
				}
			}
			check(fmt.Sprintf("sign %d sectors %08b", i, mask), img)
		}
		for n := 0; n < fileSize; n += stride {
			_, _, err := decodeFile(after[:n], damageChain)
			if !errors.As(err, new(*CorruptError)) {
				t.Fatalf("truncated to %d bytes: %v", n, err)
			}
			counts["truncated"]++
		}
	}
	if counts["refused"] == 0 || counts["signed from the new state"] == 0 || counts["signed from the previous state"] == 0 {
		t.Fatalf("the images did not cover every outcome: %v", counts)
	}
	t.Logf("%v", counts)
}

func TestInspectAndRepair(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	file, _, precommit, newer := damagedFixture(t)
	// Damage the newer slot: precommit 7/0, the state, is in it.
	img := bytes.Clone(file)
	img[newer*slotSize+200] ^= 0x04
	dir := t.TempDir()
	path := dir + "/" + stateFileName(damageChain)
	if err := DirFS(dir).Create(stateFileName(damageChain), img); err != nil {
		t.Fatal(err)
	}
	key := newKey(3)
	g := newGuard(t, key, Config{Dir: dir})
	// A Guard holds the file of another chain open and locked meanwhile:
	// Inspect reads without the lock.
	rep, err := Inspect(DirFS(dir), damageChain)
	if err != nil {
		t.Fatal(err)
	}
	var ce *CorruptError
	if !errors.As(rep.Err, &ce) || ce.Slots[0] != newer || rep.Slots[newer].Valid || !rep.Slots[1-newer].Valid ||
		!rep.Slots[newer].HeaderRead || rep.Slots[newer].Step != 3 || rep.Slots[1-newer].Step != 2 || rep.RepairAbove != 7 {
		t.Fatalf("Inspect: %+v", rep)
	}
	if !strings.Contains(rep.Slots[newer].Damage, "checksum") {
		t.Fatalf("Inspect: damage %q", rep.Slots[newer].Damage)
	}
	// Repair refuses a height at or below what the file reads.
	if _, err := g.Repair(ctx, damageChain, 7); !errors.As(err, new(*DoubleSignError)) {
		t.Fatalf("Repair at 7: %v", err)
	}
	if b, _ := os.ReadFile(path); !bytes.Equal(b, img) {
		t.Fatal("a refused Repair wrote the file")
	}
	evidence, err := g.Repair(ctx, damageChain, 8)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(dir + "/" + evidence); !bytes.Equal(b, img) {
		t.Fatalf("the damaged file was not kept as %s", evidence)
	}
	st, err := g.State(ctx, damageChain)
	if err != nil || st.Height != 8 || st.Step != 0 {
		t.Fatalf("after Repair: %+v, %v", st, err)
	}
	// The precommit at 7 is now below the state; a vote at 8 signs.
	if _, err := g.SignBytes(ctx, precommit); !errors.As(err, new(*DoubleSignError)) {
		t.Fatalf("7/0 after Repair at 8: %v", err)
	}
	v8 := msg(t, signbytes.CometBFT, damageChain, signbytes.Prevote, 8, 0, 0x12, baseTime)
	s, err := g.SignBytes(ctx, v8)
	if err != nil {
		t.Fatal(err)
	}
	key.Verify(t, v8, s.Signature)
	// A healthy file and a missing one are Init's, not Repair's.
	if _, err := g.Repair(ctx, damageChain, 100); !errors.Is(err, signer.ErrInvalidArgument) {
		t.Fatalf("Repair of a healthy file: %v", err)
	}
	if _, err := g.Repair(ctx, "no-such-chain", 100); !errors.Is(err, signer.ErrInvalidArgument) {
		t.Fatalf("Repair of a missing file: %v", err)
	}
	rep, err = Inspect(DirFS(dir), damageChain)
	if err != nil || rep.Err != nil || rep.State.Height != 8 || !rep.Slots[0].Valid || !rep.Slots[1].Valid {
		t.Fatalf("Inspect after: %+v, %v", rep, err)
	}
}

// TestRepairTruncated repairs a file cut short, and one grown long.
func TestRepairTruncated(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	file, _, _, _ := damagedFixture(t)
	for _, img := range [][]byte{file[:100], append(bytes.Clone(file), 1, 2, 3)} {
		dir := t.TempDir()
		if err := DirFS(dir).Create(stateFileName(damageChain), img); err != nil {
			t.Fatal(err)
		}
		g := newGuard(t, newKey(3), Config{Dir: dir})
		if _, err := g.State(ctx, damageChain); !errors.As(err, new(*CorruptError)) {
			t.Fatalf("%d bytes: %v", len(img), err)
		}
		if _, err := g.Repair(ctx, damageChain, 20); err != nil {
			t.Fatalf("%d bytes: Repair: %v", len(img), err)
		}
		if st, err := g.State(ctx, damageChain); err != nil || st.Height != 20 {
			t.Fatalf("%d bytes: after Repair: %+v, %v", len(img), st, err)
		}
	}
}

// TestRepairBounds: Repair's lower bound is the highest height a slot
// reads, checked or not — a damaged slot whose header reads above the
// intact one raises it — less one for an intact slot at step 0 (Init or
// Repair: nothing signed there yet). Repair on a missing file makes none,
// even with AutoInit.
func TestRepairBounds(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	file, _, _, newer := damagedFixture(t) // 7/0 prevote and precommit
	img := bytes.Clone(file)
	binary.LittleEndian.PutUint64(img[newer*slotSize+16:], 12) // the header now reads height 12; the CRC fails
	fsys := memFS{stateFileName(damageChain): img}
	rep, err := Inspect(fsys, damageChain)
	if err != nil || rep.RepairAbove != 12 {
		t.Fatalf("a damaged header above the intact slot: RepairAbove %d, %v", rep.RepairAbove, err)
	}
	g := newGuard(t, newKey(3), Config{FS: fsys, AutoInit: true})
	if _, err := g.Repair(ctx, damageChain, 12); !errors.As(err, new(*DoubleSignError)) {
		t.Fatalf("Repair at 12: %v", err)
	}
	if _, err := g.Repair(ctx, damageChain, 13); err != nil {
		t.Fatal(err)
	}
	// Repaired at 13 (both slots at step 0); one slot's magic is then
	// damaged, so its header is unreadable: the intact slot at step 0
	// allows 13 again, since nothing was signed there.
	after := fsys[stateFileName(damageChain)]
	after[0] ^= 1
	if rep, _ := Inspect(fsys, damageChain); rep.RepairAbove != 12 {
		t.Fatalf("after a repair at 13: RepairAbove %d, want 12", rep.RepairAbove)
	}
	g.Close()
	g = newGuard(t, newKey(3), Config{FS: fsys, AutoInit: true}) // restarted: the damage is read
	if _, err := g.Repair(ctx, damageChain, 13); err != nil {
		t.Fatalf("Repair again at 13: %v", err)
	}
	if _, err := g.Repair(ctx, "missing-chain", 5); !errors.Is(err, signer.ErrInvalidArgument) {
		t.Fatalf("Repair of a missing file: %v", err)
	}
	if _, ok := fsys[stateFileName("missing-chain")]; ok {
		t.Fatal("Repair with AutoInit made a state file")
	}
}
