package guard

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/signerkit/signerkit/internal/statefile"
	"github.com/signerkit/signerkit/signer"
)

// Report is what Inspect finds in a chain's state file.
type Report struct {
	ChainID string
	// Name is the state file's name in its directory.
	Name string
	// Size is the file's size in bytes; a whole state file has 8192.
	Size int
	// Slots describe the file's two slots when Size is right.
	Slots [2]SlotReport
	// State is the state a Guard would sign from. It is set only when Err
	// is nil.
	State State
	// Err is nil for a healthy file, or the error a Guard gives on it: a
	// *CorruptError, or one satisfying errors.Is(err, ErrNoState).
	Err error
	// RepairAbove is the highest height either slot reads, checked or
	// not: Repair takes a height above it.
	RepairAbove int64
}

// SlotReport is one slot of a state file.
type SlotReport struct {
	// Valid is true when the slot passes all its checks.
	Valid bool
	// Damage says why it does not, when Valid is false.
	Damage string
	// HeaderRead is true when Seq, Height, Round and Step were read: for
	// a slot that is not Valid they come from its header unchecked, and
	// may themselves be damaged.
	HeaderRead    bool
	Seq           uint64
	Height, Round int64
	Step          int8
}

// Inspect reads chainID's state file in fsys without locking it or
// changing anything, so it may run beside a Guard that has the file open
// (in another process, `signerkit state show` beside a running daemon).
// Such a read may land in the middle of a sign's write and see that slot
// half written, so a file on a directory (DirFS) found damaged is read
// again, up to three times 5 ms apart, before it is reported damaged. It returns an error only when
// the file cannot be read; what the file holds, damaged or not, is in the
// Report.
func Inspect(fsys FS, chainID string) (*Report, error) {
	name := stateFileName(chainID)
	r := &Report{ChainID: chainID, Name: name}
	var b []byte
	for try := 0; ; try++ {
		var err error
		b, err = readWhole(fsys, name)
		if errors.Is(err, fs.ErrNotExist) {
			r.Err = fmt.Errorf("guard: chain %q (%s): %w", chainID, name, ErrNoState)
			return r, nil
		}
		if err != nil {
			return nil, &StorageError{Path: name, Op: "read", Err: err}
		}
		rec, _, err := decodeFile(b, chainID)
		if err == nil {
			r.State, r.Err = rec.state(), nil
			break
		}
		r.Err = withPath(err, name)
		if _, lockFree := fsys.(statefile.Dir); !lockFree || try == 2 {
			break // through the FS's Open, nothing writes meanwhile
		}
		time.Sleep(5 * time.Millisecond)
	}
	r.Size = len(b)
	if len(b) == fileSize {
		for i := range r.Slots {
			raw := b[i*slotSize : (i+1)*slotSize]
			s := &r.Slots[i]
			rec, err := decodeSlot(raw, chainID)
			if err == nil {
				s.Valid = true
			} else {
				s.Damage = err.Error()
				rec, s.HeaderRead = readHeader(raw)
			}
			s.HeaderRead = s.HeaderRead || s.Valid
			if s.HeaderRead {
				s.Seq, s.Height, s.Round, s.Step = rec.Seq, rec.Height, rec.Round, rec.Step
			}
		}
	}
	r.RepairAbove, _ = headersMax(b, chainID)
	return r, nil
}

// readWhole reads at most one byte more than a state file holds. On a
// directory it reads the file with no lock, since the Guard locks the
// files it has open.
func readWhole(fsys FS, name string) ([]byte, error) {
	buf := make([]byte, fileSize+1)
	if d, ok := fsys.(statefile.Dir); ok {
		f, err := os.Open(filepath.Join(string(d), name))
		if err != nil {
			return nil, err
		}
		defer f.Close()
		n, err := io.ReadFull(f, buf)
		if err == io.ErrUnexpectedEOF || err == io.EOF {
			err = nil
		}
		return buf[:n], err
	}
	f, err := fsys.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	n, err := f.ReadAt(buf, 0)
	if err == io.EOF {
		err = nil
	}
	return buf[:n], err
}

// Repair starts a chain whose state file is damaged again at height h,
// the way Init starts a new one: the Guard then signs nothing below h.
// It is for the operator, who has found the last height the validator
// may have signed (on the chain itself) and passes one more; h must also
// be above every height either slot of the file reads (Report.RepairAbove),
// checked or not, else Repair refuses with a *DoubleSignError.
//
// The damaged file is kept: Repair first copies it, durably, to
// <name>.damaged-<UTC time>, and returns that name. It then writes the new
// state over the file in place and syncs it; a power cut during that
// write leaves a file that is still refused, and Repair can run again
// (above the height the new slot may then read).
// Repair refuses a healthy file (Init raises one) and a missing one (Init
// makes one), with errors wrapping signer.ErrInvalidArgument.
func (g *Guard) Repair(ctx context.Context, chainID string, h int64) (string, error) {
	if chainID == "" || len(chainID) > MaxChainIDLen || h < 1 {
		return "", fmt.Errorf("guard: Repair(%q, %d): %w", chainID, h, signer.ErrInvalidArgument)
	}
	if g.closed.Load() {
		return "", fmt.Errorf("guard: %w", signer.ErrClosed)
	}
	if g.store != nil {
		return "", fmt.Errorf("guard: Repair works on state files, not on %s: %w", g.store.Name(), signer.ErrUnsupported)
	}
	c := g.chain(chainID)
	if err := c.acquire(ctx); err != nil {
		return "", err
	}
	defer c.release()
	if !c.loaded {
		// load would make a missing file with Config.AutoInit.
		f, err := g.fsys.Open(c.name)
		if errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("guard: chain %q has no state file to repair; Init makes one: %w", chainID, signer.ErrInvalidArgument)
		}
		if err == nil {
			f.Close()
		}
	}
	err := g.load(ctx, c)
	switch {
	case err == nil:
		return "", fmt.Errorf("guard: chain %q: the state file is healthy (%d/%d/%d); Init raises it: %w",
			chainID, c.rec.Height, c.rec.Round, c.rec.Step, signer.ErrInvalidArgument)
	case errors.Is(err, ErrNoState):
		return "", fmt.Errorf("guard: chain %q has no state file to repair; Init makes one: %w", chainID, signer.ErrInvalidArgument)
	case !errors.As(err, new(*CorruptError)):
		return "", err
	}
	f, err := g.fsys.Open(c.name)
	if err != nil {
		return "", &StorageError{Path: g.path(c), Op: "open", Err: err}
	}
	defer func() {
		if f != nil {
			f.Close()
		}
	}()
	buf := make([]byte, fileSize+1)
	n, err := f.ReadAt(buf, 0)
	if err != nil && err != io.EOF {
		return "", &StorageError{Path: g.path(c), Op: "read", Err: err}
	}
	old := buf[:n]
	above, seq := headersMax(old, chainID)
	if h <= above {
		return "", &DoubleSignError{ChainID: chainID, Height: h, LastHeight: above,
			Reason: fmt.Sprintf("Repair needs a height above %d, the highest a slot of the damaged file reads", above)}
	}
	evidence := fmt.Sprintf("%s.damaged-%s", c.name, time.Now().UTC().Format("20060102T150405.000000000Z"))
	if err := g.fsys.Create(evidence, old); err != nil {
		return "", &StorageError{Path: filepath.Join(g.dir, evidence), Op: "create", Err: err}
	}
	// Sequence numbers above any the file held, so that a write torn
	// between the two slots leaves the new state the newer one, or a slot
	// that is still refused.
	r0 := record{Seq: seq + 1, ChainID: chainID, Height: h}
	r1 := r0
	r1.Seq = seq + 2
	data := append(r0.encode(), r1.encode()...)
	if _, err := f.WriteAt(data, 0); err != nil {
		return evidence, &StorageError{Path: g.path(c), Op: "write", Err: err}
	}
	if err := f.Sync(); err != nil {
		return evidence, &StorageError{Path: g.path(c), Op: "sync", Err: err}
	}
	if n > fileSize {
		// A file longer than a state file: Inspect and load read one
		// byte past the end, so cut it.
		if t, ok := f.(interface{ Truncate(int64) error }); ok {
			if err := t.Truncate(fileSize); err != nil {
				return evidence, &StorageError{Path: g.path(c), Op: "truncate", Err: err}
			}
			if err := f.Sync(); err != nil {
				return evidence, &StorageError{Path: g.path(c), Op: "sync", Err: err}
			}
		}
	}
	err = f.Close()
	f = nil
	if err != nil {
		return evidence, &StorageError{Path: g.path(c), Op: "close", Err: err}
	}
	return evidence, g.load(ctx, c)
}

// headersMax returns the highest height that could have been signed at,
// as the whole slots in b read it, and the highest sequence number of the
// slots that pass their checks. A slot that passes them at step 0 (made
// by Init or Repair) counts one height lower, since nothing was signed at
// its height; a damaged slot counts at the height its header reads,
// checked or not. Sequence numbers come from intact slots only: a damaged
// one near the top of the range would wrap the next ones to 0.
func headersMax(b []byte, chainID string) (height int64, seq uint64) {
	for off := 0; off+slotSize <= len(b) && off < fileSize; off += slotSize {
		s := b[off : off+slotSize]
		if r, err := decodeSlot(s, chainID); err == nil {
			h := r.Height
			if r.Step == 0 {
				h--
			}
			height, seq = max(height, h), max(seq, r.Seq)
		} else if r, ok := readHeader(s); ok {
			height = max(height, r.Height)
		}
	}
	return height, seq
}

// state returns r as a State.
func (r record) state() State {
	return State{ChainID: r.ChainID, Height: r.Height, Round: r.Round, Step: r.Step,
		SignBytes: r.SignBytes, Signature: r.Signature}
}
