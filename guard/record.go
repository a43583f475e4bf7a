package guard

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash/crc32"

	"github.com/signerkit/signerkit/signbytes"
)

// The state file is two fixed-size slots written in turn. Each slot holds
// one whole record: a sequence number, the last height, round and step, the
// sign bytes and signature, and a CRC-32C of the slot. A sign overwrites
// the older slot in place and syncs once. A slot that fails its checks,
// torn by a power cut or damaged on disk, makes the whole file refused
// until Repair (see decodeFile): release comes only after the sync, but a
// damaged newer slot looks like a torn one.
//
// Slot layout (little endian):
//
//	0    magic "sk-guard"
//	8    sequence number (uint64), one more on every write
//	16   height (int64)
//	24   round (int64)
//	32   step (uint8): 0 none, 1 propose, 2 prevote, 3 precommit
//	33   format version (uint8), 1
//	34   chain id length (uint16)
//	36   sign bytes length (uint16)
//	38   signature length (uint16)
//	40   chain id, sign bytes, signature; zeros to the checksum
//	4092 CRC-32C (Castagnoli) of bytes 0 to 4091
const (
	slotSize     = 4096
	fileSize     = 2 * slotSize
	headerSize   = 40
	crcOffset    = slotSize - 4
	recordMagic  = "sk-guard"
	recordFormat = 1

	// MaxChainIDLen is the longest chain id the guard keeps state for.
	MaxChainIDLen = 256
	// MaxSignBytes is the longest vote or proposal sign bytes the guard
	// signs; real ones are 100 to 200 bytes.
	MaxSignBytes = 2048
	// MaxSignatureLen is the longest signature the guard stores.
	MaxSignatureLen = 512
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// record is the double-sign state of one chain.
type record struct {
	Seq       uint64
	ChainID   string
	Height    int64
	Round     int64
	Step      int8
	SignBytes []byte
	Signature []byte
}

// encode returns the record as one slot.
func (r *record) encode() []byte { return r.encodeTo(make([]byte, slotSize)) }

// encodeTo encodes the record into s, which must be slotSize bytes long,
// and returns s.
func (r *record) encodeTo(s []byte) []byte {
	clear(s)
	copy(s, recordMagic)
	binary.LittleEndian.PutUint64(s[8:], r.Seq)
	binary.LittleEndian.PutUint64(s[16:], uint64(r.Height))
	binary.LittleEndian.PutUint64(s[24:], uint64(r.Round))
	s[32] = byte(r.Step)
	s[33] = recordFormat
	binary.LittleEndian.PutUint16(s[34:], uint16(len(r.ChainID)))
	binary.LittleEndian.PutUint16(s[36:], uint16(len(r.SignBytes)))
	binary.LittleEndian.PutUint16(s[38:], uint16(len(r.Signature)))
	off := headerSize
	off += copy(s[off:], r.ChainID)
	off += copy(s[off:], r.SignBytes)
	copy(s[off:], r.Signature)
	binary.LittleEndian.PutUint32(s[crcOffset:], crc32.Checksum(s[:crcOffset], castagnoli))
	return s
}

// decodeSlot reads one slot. It checks everything a record must satisfy,
// including that the sign bytes it holds are a vote or proposal of the
// chain at the height, round and step it records.
func decodeSlot(s []byte, chainID string) (record, error) {
	if len(s) != slotSize {
		return record{}, fmt.Errorf("slot is %d bytes, want %d", len(s), slotSize)
	}
	if bytes.Count(s, []byte{0}) == len(s) {
		return record{}, fmt.Errorf("slot is empty")
	}
	if string(s[:8]) != recordMagic {
		return record{}, fmt.Errorf("bad magic %q", s[:8])
	}
	if got, want := binary.LittleEndian.Uint32(s[crcOffset:]), crc32.Checksum(s[:crcOffset], castagnoli); got != want {
		return record{}, fmt.Errorf("checksum mismatch (stored %08x, computed %08x)", got, want)
	}
	if s[33] != recordFormat {
		return record{}, fmt.Errorf("record format %d, this version reads %d", s[33], recordFormat)
	}
	r := record{
		Seq:    binary.LittleEndian.Uint64(s[8:]),
		Height: int64(binary.LittleEndian.Uint64(s[16:])),
		Round:  int64(binary.LittleEndian.Uint64(s[24:])),
		Step:   int8(s[32]),
	}
	nc, nb, ns := int(binary.LittleEndian.Uint16(s[34:])), int(binary.LittleEndian.Uint16(s[36:])), int(binary.LittleEndian.Uint16(s[38:]))
	if nc > MaxChainIDLen || nb > MaxSignBytes || ns > MaxSignatureLen {
		return record{}, fmt.Errorf("field lengths %d/%d/%d exceed the limits", nc, nb, ns)
	}
	end := headerSize + nc + nb + ns
	if bytes.Count(s[end:crcOffset], []byte{0}) != crcOffset-end {
		return record{}, fmt.Errorf("non-zero bytes after the record")
	}
	off := headerSize
	r.ChainID = string(s[off : off+nc])
	off += nc
	if nb > 0 {
		r.SignBytes = bytes.Clone(s[off : off+nb])
	}
	off += nb
	if ns > 0 {
		r.Signature = bytes.Clone(s[off : off+ns])
	}
	if r.ChainID != chainID {
		return record{}, fmt.Errorf("record is for chain %q, not %q", r.ChainID, chainID)
	}
	if r.Seq == 0 || r.Height < 0 || r.Round < 0 || r.Step < 0 || r.Step > 3 {
		return record{}, fmt.Errorf("sequence %d, height %d, round %d, step %d out of range", r.Seq, r.Height, r.Round, r.Step)
	}
	// Sign bytes without a signature are a record written ahead of its
	// sign (Config.WriteAhead); a signature without sign bytes is never
	// written.
	if nb == 0 && ns > 0 || (r.Step == 0) != (nb == 0) {
		return record{}, fmt.Errorf("step %d with %d bytes of sign bytes and %d of signature", r.Step, nb, ns)
	}
	if nb > 0 {
		m, err := signbytes.Parse(r.SignBytes)
		if err != nil {
			return record{}, fmt.Errorf("stored sign bytes: %v", err)
		}
		if m.Phase.Step() == 0 || m.Height != r.Height || m.Round != r.Round || m.Step() != r.Step || m.ChainID != chainID {
			return record{}, fmt.Errorf("stored sign bytes are a %v, not the recorded %d/%d/%d", m, r.Height, r.Round, r.Step)
		}
	}
	return r, nil
}

// decodeFile reads a whole state file and returns the newest record and
// the slot it is in. Both slots must pass their checks. A slot that fails
// them next to a valid one may be a write torn by a crash (its signature
// never released), but it may as well be the newest state damaged on disk
// after its signature was released: the two cannot be told apart, and
// signing from the older slot could then sign a second, conflicting
// message at the same height, round and step. So any damage is refused,
// with a *CorruptError that names the damaged slots (its Path unset).
func decodeFile(b []byte, chainID string) (record, int, error) {
	if len(b) != fileSize {
		return record{}, 0, &CorruptError{Reason: fmt.Sprintf("state file is %d bytes, want %d (truncated or not a state file)", len(b), fileSize)}
	}
	r0, err0 := decodeSlot(b[:slotSize], chainID)
	r1, err1 := decodeSlot(b[slotSize:], chainID)
	switch {
	case err0 != nil && err1 != nil:
		return record{}, 0, &CorruptError{Slots: []int{0, 1}, Reason: fmt.Sprintf("both slots are damaged: slot 0: %v; slot 1: %v", err0, err1)}
	case err0 != nil:
		return record{}, 0, oneSlotDamaged(0, err0, r1, b[:slotSize])
	case err1 != nil:
		return record{}, 0, oneSlotDamaged(1, err1, r0, b[slotSize:])
	}
	newer, older, slot := r0, r1, 0
	if r1.Seq > r0.Seq {
		newer, older, slot = r1, r0, 1
	}
	if newer.Seq == older.Seq {
		return record{}, 0, &CorruptError{Slots: []int{0, 1}, Reason: fmt.Sprintf("both slots have sequence number %d", newer.Seq)}
	}
	if hrsLess(newer, older) {
		return record{}, 0, &CorruptError{Slots: []int{0, 1}, Reason: fmt.Sprintf("the newer slot (%d/%d/%d) is behind the older (%d/%d/%d)",
			newer.Height, newer.Round, newer.Step, older.Height, older.Round, older.Step)}
	}
	return newer, slot, nil
}

// oneSlotDamaged is the refusal of a file whose slot n fails its checks
// (err) while the other holds intact.
func oneSlotDamaged(n int, err error, intact record, raw []byte) *CorruptError {
	what := "its header is unreadable too"
	if h, ok := readHeader(raw); ok {
		what = fmt.Sprintf("its unverified header reads sequence %d at %d/%d/%d", h.Seq, h.Height, h.Round, h.Step)
	}
	return &CorruptError{Slots: []int{n}, Reason: fmt.Sprintf(
		"slot %d is damaged (%v; %s); slot %d holds %d/%d/%d (sequence %d), but the damaged slot may have held a newer state "+
			"whose signature was released, so signing from the intact one could double sign",
		n, err, what, 1-n, intact.Height, intact.Round, intact.Step, intact.Seq)}
}

// readHeader returns the sequence number, height, round and step a slot's
// header holds, unchecked: ok is false when the slot does not start with
// the magic or its fields are out of range. It serves diagnosis and the
// lower bound of Repair, never signing.
func readHeader(s []byte) (record, bool) {
	if len(s) < headerSize || string(s[:8]) != recordMagic {
		return record{}, false
	}
	r := record{
		Seq:    binary.LittleEndian.Uint64(s[8:]),
		Height: int64(binary.LittleEndian.Uint64(s[16:])),
		Round:  int64(binary.LittleEndian.Uint64(s[24:])),
		Step:   int8(s[32]),
	}
	if r.Height < 0 || r.Round < 0 || r.Step < 0 || r.Step > 3 {
		return record{}, false
	}
	return r, true
}

// hrsLess reports whether a's height, round and step come before b's.
func hrsLess(a, b record) bool {
	if a.Height != b.Height {
		return a.Height < b.Height
	}
	if a.Round != b.Round {
		return a.Round < b.Round
	}
	return a.Step < b.Step
}

// stateFileName returns the file name of a chain's state: the chain id
// with every byte outside [A-Za-z0-9_-] (and a leading '.') written as
// %XX, so that distinct chain ids get distinct names, plus ".signstate".
// Chain ids whose name would be too long for a file system are named by
// their SHA-256 instead; the chain id inside the record is checked on
// every load either way.
func stateFileName(chainID string) string {
	var b []byte
	for i := 0; i < len(chainID); i++ {
		c := chainID[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.' && i > 0 {
			b = append(b, c)
		} else {
			b = fmt.Appendf(b, "%%%02X", c)
		}
	}
	if len(b) > 200 {
		sum := sha256.Sum256([]byte(chainID))
		return "sha256-" + hex.EncodeToString(sum[:]) + ".signstate"
	}
	return string(b) + ".signstate"
}
