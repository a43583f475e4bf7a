package guard

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/signerkit/signerkit/signbytes"
	"github.com/signerkit/signerkit/signer/signertest"
)

// The power-cut test. SIGKILL (crash_test.go) leaves the page cache
// intact; a power cut does not: what was written but not yet synced may be
// lost, kept or torn. powerFS is an FS in memory that keeps apart what was
// synced from what was only written, and the directory entries made
// durable from those only linked, and takes the image a power cut would
// leave at any point. The tests run signs through a Guard on it, take
// images at random file system operations (the only points where the
// disk's state changes), open a new Guard on each image and check it
// against every signature released before the image was taken.

// sectorSize is the unit a disk is assumed to write whole; a torn write
// is also cut at arbitrary bytes, which is harsher.
const sectorSize = 512

// powerSkipDirSync, when true, makes powerFS.Create return without making
// the new name durable: the mistake of a Create that does not sync the
// directory. Only a deliberately broken variant of this file sets it, to
// show the test catches that.
const powerSkipDirSync = false

// powerFS is an FS in memory with a disk behind it. Each file has the
// bytes synced (durable), the bytes a reader sees (current) and the writes
// since the last sync (pending); each name is durable or only linked.
type powerFS struct {
	mu    sync.Mutex
	files map[string]*powerFile
	// log holds, per file name, every slot or file ever handed to WriteAt
	// or Create, in order: the states that were ever written.
	log map[string][][]byte
	// hook, when set, is called with mu held after every operation that
	// changes what a power cut would leave, with a label.
	hook func(at string)
	// maxPending is the most unsynced writes one file ever had at once.
	maxPending int
}

type powerFile struct {
	fs          *powerFS
	name        string
	durable     []byte
	current     []byte
	pending     []powerWrite
	nameDurable bool
}

type powerWrite struct {
	off  int64
	data []byte
}

func newPowerFS() *powerFS {
	return &powerFS{files: map[string]*powerFile{}, log: map[string][][]byte{}}
}

func (p *powerFS) at(label string) {
	if p.hook != nil {
		p.hook(label)
	}
}

func (p *powerFS) Open(name string) (File, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if f := p.files[name]; f != nil {
		return f, nil
	}
	return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
}

// Create follows DirFS.Create: the data goes to a temporary file that is
// synced, the name is linked to it, and the directory is synced. A power
// cut before the link leaves no file by that name (the temporary file's
// name is not one the Guard opens); one after the link and before the
// directory sync leaves the name or not, with the whole data either way.
func (p *powerFS) Create(name string, data []byte) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.files[name] != nil {
		return &fs.PathError{Op: "create", Path: name, Err: fs.ErrExist}
	}
	p.log[name] = append(p.log[name], bytes.Clone(data))
	p.at("create: temporary file written")
	p.at("create: temporary file synced")
	f := &powerFile{fs: p, name: name, durable: bytes.Clone(data), current: bytes.Clone(data)}
	p.files[name] = f
	p.at("create: linked, directory not synced")
	if powerSkipDirSync {
		return nil
	}
	for _, f := range p.files {
		f.nameDurable = true
	}
	p.at("create: directory synced")
	return nil
}

func (f *powerFile) ReadAt(b []byte, off int64) (int, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if off >= int64(len(f.current)) {
		return 0, io.EOF
	}
	n := copy(b, f.current[off:])
	if n < len(b) {
		return n, io.EOF
	}
	return n, nil
}

func extend(b []byte, end int64) []byte {
	if end > int64(len(b)) {
		b = append(b, make([]byte, end-int64(len(b)))...)
	}
	return b
}

func (f *powerFile) WriteAt(b []byte, off int64) (int, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	f.current = extend(f.current, off+int64(len(b)))
	copy(f.current[off:], b)
	f.pending = append(f.pending, powerWrite{off, bytes.Clone(b)})
	f.fs.maxPending = max(f.fs.maxPending, len(f.pending))
	f.fs.log[f.name] = append(f.fs.log[f.name], bytes.Clone(b))
	f.fs.at("written")
	return len(b), nil
}

// Sync is fdatasync: it makes the file's data durable, not its name.
func (f *powerFile) Sync() error {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	f.fs.at("sync called")
	f.durable = bytes.Clone(f.current)
	f.pending = nil
	f.fs.at("synced")
	return nil
}

func (f *powerFile) Close() error { return nil }

// image returns what a power cut now would leave, as a new powerFS with
// everything durable. The caller holds p.mu. Each pending write is lost,
// kept, or torn: a prefix of whole sectors, a prefix cut at any byte, or
// any subset of its sectors. A name not yet durable is kept or lost.
func (p *powerFS) image(r *rand.Rand) *powerFS {
	out := newPowerFS()
	for name, f := range p.files {
		if !f.nameDurable && r.IntN(2) == 0 {
			continue
		}
		img := bytes.Clone(f.durable)
		for _, w := range f.pending {
			keep := func(from, to int) {
				img = extend(img, w.off+int64(to))
				copy(img[w.off+int64(from):], w.data[from:to])
			}
			n := len(w.data)
			switch r.IntN(5) {
			case 0: // lost
			case 1:
				keep(0, n)
			case 2: // torn at a sector boundary
				if s := (n - 1) / sectorSize; s > 0 {
					keep(0, (1+r.IntN(s))*sectorSize)
				}
			case 3: // torn at any byte
				keep(0, 1+r.IntN(n-1))
			case 4: // some sectors reached the platter, in any order
				for s := 0; s < n; s += sectorSize {
					if r.IntN(2) == 0 {
						keep(s, min(s+sectorSize, n))
					}
				}
			}
		}
		out.files[name] = &powerFile{fs: out, name: name, durable: img, current: bytes.Clone(img), nameDurable: true}
	}
	return out
}

// powerRelease is a signature a Guard released: the sign bytes it is over
// (not always the request's: see Signed.TimestampChanged).
type powerRelease struct {
	chain     string
	h, r      int64
	step      int8
	signBytes []byte
	sig       []byte
}

// powerCrash is one image and what was known when it was taken: the
// first nReleased releases had been returned to callers, and the first
// nWritten[name] entries of the log had been written.
type powerCrash struct {
	at        string
	fs        *powerFS
	nReleased int
	nWritten  map[string]int
}

// powerRig runs signs through a Guard on a powerFS and keeps the releases
// and the crash images.
type powerRig struct {
	t    *testing.T
	key  *signertest.Fake
	pub  ed25519.PublicKey
	fsys *powerFS
	g    *Guard

	mu       sync.Mutex // guards released and byHRS
	released []powerRelease
	byHRS    map[[4]any]powerRelease

	rng     *rand.Rand // used with fsys.mu held
	prob    float64    // chance of an image at each operation
	perOp   int        // images taken at an operation chosen
	crashes []powerCrash

	// firstWrite maps a record written (writtenKey) to the index in
	// fsys.log of its first write; built by wasWritten.
	firstWrite map[string]int

	// probes counts the released signatures asked for again on an image
	// at its recovered state ([0]) and below it ([1]); refused counts the
	// chains an image left with a torn slot, which the Guard refuses.
	probes  [2]int
	refused int
}

func newPowerRig(t *testing.T, seed uint64, prob float64, perOp int, auto bool) *powerRig {
	rig := &powerRig{t: t, key: newKey(21), fsys: newPowerFS(), byHRS: map[[4]any]powerRelease{},
		rng: rand.New(rand.NewPCG(seed, 0x9e3779b9)), prob: prob, perOp: perOp}
	rig.pub = rig.key.Public().(ed25519.PublicKey)
	rig.fsys.hook = rig.take
	g, err := New(rig.key, Config{FS: rig.fsys, AutoInit: auto})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	rig.g = g
	return rig
}

// take is fsys's hook: with probability prob it takes perOp images of the
// disk as it is now. fsys.mu is held, so no write or sync runs meanwhile;
// the releases counted were all returned after their sync, before this.
func (rig *powerRig) take(at string) {
	if rig.rng.Float64() >= rig.prob {
		return
	}
	rig.mu.Lock()
	n := len(rig.released)
	rig.mu.Unlock()
	written := map[string]int{}
	for name, l := range rig.fsys.log {
		written[name] = len(l)
	}
	for range rig.perOp {
		rig.crashes = append(rig.crashes, powerCrash{at: at, fs: rig.fsys.image(rig.rng), nReleased: n, nWritten: written})
	}
}

// sign asks the Guard to sign b and records a released signature, after
// checking it and that no other was released for its height/round/step.
func (rig *powerRig) sign(ctx context.Context, b []byte) (Signed, error) {
	s, err := rig.g.SignBytes(ctx, b)
	if err != nil {
		var dse *DoubleSignError
		if !errors.As(err, &dse) {
			rig.t.Errorf("sign %x: %v", b, err)
		}
		return s, err
	}
	if !ed25519.Verify(rig.pub, s.SignBytes, s.Signature) {
		rig.t.Errorf("released signature %x does not verify over %x", s.Signature, s.SignBytes)
	}
	m, err := signbytes.Parse(s.SignBytes)
	if err != nil {
		rig.t.Errorf("released sign bytes %x: %v", s.SignBytes, err)
		return s, err
	}
	rel := powerRelease{chain: m.ChainID, h: m.Height, r: m.Round, step: m.Step(), signBytes: s.SignBytes, sig: s.Signature}
	k := [4]any{rel.chain, rel.h, rel.r, rel.step}
	rig.mu.Lock()
	defer rig.mu.Unlock()
	if prev, ok := rig.byHRS[k]; ok && (!bytes.Equal(prev.signBytes, rel.signBytes) || !bytes.Equal(prev.sig, rel.sig)) {
		rig.t.Errorf("two signatures released for %v: over %x and %x", k, prev.signBytes, rel.signBytes)
	}
	rig.byHRS[k] = rel
	rig.released = append(rig.released, rel)
	return s, nil
}

func hrsOf(h, r int64, step int8) record { return record{Height: h, Round: r, Step: step} }

// check opens a Guard on every image and checks it against what was
// released before the image was taken.
func (rig *powerRig) check(chains map[string]signbytes.Format) {
	t := rig.t
	ctx := context.Background()
	rig.mu.Lock()
	released := rig.released
	rig.mu.Unlock()
	pr := rand.New(rand.NewPCG(1, 2))
	for i, c := range rig.crashes {
		if t.Failed() {
			return
		}
		where := fmt.Sprintf("image %d (at %q, %d signatures released)", i, c.at, c.nReleased)
		// What was released before the crash, per chain: the highest
		// height/round/step and all of them.
		top := map[string]powerRelease{}
		var rels []powerRelease
		for _, r := range released[:c.nReleased] {
			rels = append(rels, r)
			if cur, ok := top[r.chain]; !ok || hrsLess(hrsOf(cur.h, cur.r, cur.step), hrsOf(r.h, r.r, r.step)) {
				top[r.chain] = r
			}
		}
		key := newKey(21)
		g, err := New(key, Config{FS: c.fs}) // no AutoInit: a lost file must not look like a new chain
		if err != nil {
			t.Fatal(err)
		}
		for chain, format := range chains {
			st, err := g.State(ctx, chain)
			last, signed := top[chain]
			var ce *CorruptError
			switch {
			case errors.As(err, &ce):
				// At most one write per file is ever unsynced (the next
				// sign writes only after this one's sync returned), and it
				// goes to the slot not holding the current state, so a
				// power cut can tear one slot only: the other still holds
				// a whole state. Both slots damaged cannot happen. A torn
				// slot is refused (it cannot be told from a newer state
				// damaged later), and the refusal must hold for signs too,
				// without calling the key or writing to the file.
				if len(ce.Slots) != 1 {
					t.Fatalf("%s: chain %q: %v", where, chain, err)
				}
				rig.refused++
				before := fileBytes(c.fs, chain)
				probe := powerMsg(t, format, chain, signbytes.Precommit, 1<<40, 0, 0x55, 0)
				if _, err := g.SignBytes(ctx, probe); !errors.As(err, new(*CorruptError)) || key.Signs() != 0 {
					t.Fatalf("%s: chain %q: sign with slot %d torn: %v", where, chain, ce.Slots[0], err)
				}
				if !bytes.Equal(before, fileBytes(c.fs, chain)) {
					t.Fatalf("%s: chain %q: a refused sign wrote the damaged file", where, chain)
				}
				continue
			case errors.Is(err, ErrNoState):
				// Only a file whose creation had not returned may be
				// missing, and then nothing was signed on it.
				if signed {
					t.Fatalf("%s: chain %q: state file lost, but %d/%d/%d was released", where, chain, last.h, last.r, last.step)
				}
				continue
			case err != nil:
				t.Fatalf("%s: chain %q: %v", where, chain, err)
			}
			got := hrsOf(st.Height, st.Round, st.Step)
			// (c) The state is one that was written, so never above what
			// was ever written.
			if !rig.wasWritten(chain, c.nWritten[stateFileName(chain)], st) {
				t.Fatalf("%s: chain %q: recovered state %d/%d/%d (sig %x) was never written", where, chain, st.Height, st.Round, st.Step, st.Signature)
			}
			if !signed {
				continue
			}
			// (b) At or above every released height/round/step.
			if hrsLess(got, hrsOf(last.h, last.r, last.step)) {
				t.Fatalf("%s: chain %q: recovered state %d/%d/%d is below the released %d/%d/%d",
					where, chain, st.Height, st.Round, st.Step, last.h, last.r, last.step)
			}
			// So the last released one, and a sample of the others: a
			// conflicting request is refused, an identical one gets the
			// same signature back (or is refused, below the state).
			probe := []powerRelease{last}
			for j := 0; j < 6 && len(rels) > 0; j++ {
				if r := rels[pr.IntN(len(rels))]; r.chain == chain {
					probe = append(probe, r)
				}
			}
			for _, r := range probe {
				rig.probe(ctx, g, key, where, format, st, r)
			}
		}
		g.Close()
	}
}

func (rig *powerRig) probe(ctx context.Context, g *Guard, key *signertest.Fake, where string, f signbytes.Format, st State, r powerRelease) {
	t := rig.t
	before := key.Signs()
	s, err := g.SignBytes(ctx, r.signBytes)
	atState := st.Height == r.h && st.Round == r.r && st.Step == r.step
	if atState {
		rig.probes[0]++
	} else {
		rig.probes[1]++
	}
	switch {
	case atState && (err != nil || !s.Cached || !bytes.Equal(s.Signature, r.sig)):
		t.Fatalf("%s: the released %d/%d/%d asked again: %+v, %v; released %x", where, r.h, r.r, r.step, s, err, r.sig)
	case !atState && !errors.As(err, new(*DoubleSignError)):
		t.Fatalf("%s: the released %d/%d/%d, below the state %d/%d/%d, asked again: %+v, %v", where, r.h, r.r, r.step, st.Height, st.Round, st.Step, s, err)
	}
	if err == nil && !ed25519.Verify(rig.pub, s.SignBytes, s.Signature) {
		t.Fatalf("%s: signature after the crash does not verify", where)
	}
	m, err := signbytes.Parse(r.signBytes)
	if err != nil {
		t.Fatal(err)
	}
	for _, other := range [][]byte{
		powerMsg(t, f, m.ChainID, signbytes.Phase(r.step), r.h, r.r, 0x77, 0),
		powerMsg(t, f, m.ChainID, signbytes.Phase(r.step), r.h, r.r, 0, 0),
	} {
		if bytes.Equal(other, r.signBytes) {
			continue
		}
		s, err := g.SignBytes(ctx, other)
		if err == nil && s.TimestampChanged && bytes.Equal(s.SignBytes, r.signBytes) && bytes.Equal(s.Signature, r.sig) {
			continue // the same block: the released signature back
		}
		if !errors.As(err, new(*DoubleSignError)) {
			t.Fatalf("%s: conflicting request at the released %d/%d/%d (state %d/%d/%d): %+v, %v",
				where, r.h, r.r, r.step, st.Height, st.Round, st.Step, s, err)
		}
	}
	if key.Signs() != before {
		t.Fatalf("%s: the key signed again at a released height/round/step", where)
	}
}

// fileBytes returns the durable bytes of chain's state file in fsys.
func fileBytes(fsys *powerFS, chain string) []byte {
	fsys.mu.Lock()
	defer fsys.mu.Unlock()
	if f := fsys.files[stateFileName(chain)]; f != nil {
		return bytes.Clone(f.durable)
	}
	return nil
}

// wasWritten reports whether st is the record of a slot among the first
// n written to the chain's file (a Create writes two slots).
func (rig *powerRig) wasWritten(chain string, n int, st State) bool {
	rig.fsys.mu.Lock()
	defer rig.fsys.mu.Unlock()
	if rig.firstWrite == nil {
		rig.firstWrite = map[string]int{}
	}
	if _, ok := rig.firstWrite[chain]; !ok {
		rig.firstWrite[chain] = 0 // indexed
		for i, w := range rig.fsys.log[stateFileName(chain)] {
			for off := 0; off+slotSize <= len(w); off += slotSize {
				if r, err := decodeSlot(w[off:off+slotSize], chain); err == nil {
					k := writtenKey(chain, r.Height, r.Round, r.Step, r.SignBytes, r.Signature)
					if _, ok := rig.firstWrite[k]; !ok {
						rig.firstWrite[k] = i
					}
				}
			}
		}
	}
	i, ok := rig.firstWrite[writtenKey(chain, st.Height, st.Round, st.Step, st.SignBytes, st.Signature)]
	return ok && i < n
}

func writtenKey(chain string, h, r int64, step int8, b, sig []byte) string {
	return fmt.Sprintf("%q %d/%d/%d %x %x", chain, h, r, step, b, sig)
}

// powerMsg builds sign bytes for chain at h/r; block 0 is nil, and the
// timestamp is baseTime plus ts seconds.
func powerMsg(t testing.TB, f signbytes.Format, chain string, phase signbytes.Phase, h, r int64, block byte, ts int) []byte {
	return msg(t, f, chain, phase, h, r, block, baseTime.Add(time.Duration(ts)*time.Second))
}

// powerBlock is the block a validator votes for at h/r.
func powerBlock(h, r int64) byte { return byte((h*7+r)%200) + 1 }

// walk signs, from one goroutine, rising heights, rounds and steps on
// chain, with some skipped, and asks again (identical, with another
// timestamp, or conflicting) now and then. Each sentry takes its own path.
func (rig *powerRig) walk(ctx context.Context, f signbytes.Format, chain string, from, heights int64, r *rand.Rand) {
	for h := from; h < from+heights; h++ {
		rounds := int64(1 + r.IntN(2))
		for rd := int64(0); rd < rounds; rd++ {
			for step := 1; step <= 3; step++ {
				if r.IntN(6) == 0 {
					continue // this sentry missed it
				}
				phase := signbytes.Phase(step)
				block := powerBlock(h, rd)
				if phase != signbytes.Proposal && r.IntN(5) == 0 {
					block = 0 // nil vote
				}
				if rig.t.Failed() {
					return
				}
				rig.sign(ctx, powerMsg(rig.t, f, chain, phase, h, rd, block, 0))
				switch r.IntN(8) {
				case 0: // a sentry asks again
					rig.sign(ctx, powerMsg(rig.t, f, chain, phase, h, rd, block, 0))
				case 1: // a node that crashed rebuilt it with a new time
					rig.sign(ctx, powerMsg(rig.t, f, chain, phase, h, rd, block, 1+r.IntN(9)))
				case 2: // a conflicting block
					rig.sign(ctx, powerMsg(rig.t, f, chain, phase, h, rd, powerBlock(h, rd)^0x80, 0))
				}
			}
		}
	}
}

var powerChains = map[string]signbytes.Format{"power-a": signbytes.CometBFT, "power-b": signbytes.TM2}

// TestPowerCut signs through a Guard and cuts the power at random
// operations of its file system, then opens a Guard on each image.
func TestPowerCut(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		sentries int
		heights  int64
		prob     float64
	}{
		{"one sentry per chain", 1, 100, 0.2},
		{"four sentries per chain", 4, 60, 0.15},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // each case has a rig, Guard and file system of its own
			ctx := context.Background()
			rig := newPowerRig(t, 7, tc.prob, 3, true)
			// power-a is made by AutoInit on its first sign; power-b by
			// Init at height 3, so heights 1 and 2 are refused there.
			if err := rig.g.Init(ctx, "power-b", 3); err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			for i := range tc.sentries {
				for chain, f := range powerChains {
					wg.Go(func() {
						rig.walk(ctx, f, chain, 1, tc.heights, rand.New(rand.NewPCG(uint64(i), uint64(len(chain)+int(f)))))
					})
				}
			}
			wg.Wait()
			if t.Failed() {
				return
			}
			if len(rig.released) == 0 || len(rig.crashes) == 0 {
				t.Fatalf("%d releases, %d images", len(rig.released), len(rig.crashes))
			}
			rig.check(powerChains)
			// The premise of the design, checked directly.
			rig.fsys.mu.Lock()
			maxPending := rig.fsys.maxPending
			rig.fsys.mu.Unlock()
			if maxPending > 1 {
				t.Fatalf("%d writes to one file were unsynced at once; the design has one at most", maxPending)
			}
			// Both outcomes were seen: images with a torn slot, refused,
			// and images whose state was checked against the releases.
			if rig.refused == 0 || rig.probes[0] == 0 {
				t.Fatalf("%d chains refused for a torn slot, %d probes at the recovered state: the images did not cover both", rig.refused, rig.probes[0])
			}
			t.Logf("%d signatures released, %d images checked, %d chains refused for a torn slot, released signatures asked again at/below the recovered state %v, Stats %+v",
				len(rig.released), len(rig.crashes), rig.refused, rig.probes, rig.g.Stats())
		})
	}
}

// TestPowerCutCreate cuts the power at each step of making a state file
// (by Init and by AutoInit) and at every operation of the first signs:
// before the directory entry is durable the file may be missing, but only
// while nothing has been signed on it; once a signature is released the
// file must be there in every image.
func TestPowerCutCreate(t *testing.T) {
	t.Parallel()
	for _, auto := range []bool{false, true} {
		t.Run(fmt.Sprintf("AutoInit=%v", auto), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			rig := newPowerRig(t, 11, 1, 16, auto)
			const chain = "power-create"
			f := signbytes.CometBFT
			if !auto {
				if err := rig.g.Init(ctx, chain, 5); err != nil {
					t.Fatal(err)
				}
			}
			for h := int64(5); h < 8; h++ {
				for step := 1; step <= 3; step++ {
					if _, err := rig.sign(ctx, powerMsg(t, f, chain, signbytes.Phase(step), h, 0, powerBlock(h, 0), 0)); err != nil {
						t.Fatal(err)
					}
				}
			}
			rig.check(map[string]signbytes.Format{chain: f})
			// Every kind of point was cut at, and the images before the
			// directory sync both kept and lost the file.
			kinds := map[string]int{}
			for _, c := range rig.crashes {
				_, ok := c.fs.files[stateFileName(chain)]
				kinds[fmt.Sprintf("%s, file kept %v", c.at, ok)]++
			}
			for _, want := range []string{
				"create: temporary file written, file kept false",
				"create: linked, directory not synced, file kept false",
				"create: linked, directory not synced, file kept true",
				"create: directory synced, file kept true",
				"written, file kept true", "synced, file kept true",
			} {
				if kinds[want] == 0 {
					t.Errorf("no image %q; got %v", want, kinds)
				}
			}
			t.Logf("%d images: %v", len(rig.crashes), kinds)
		})
	}
}

// TestPowerImage checks the image taker itself: a pending write is kept,
// lost, or torn at sector and byte granularity, and the durable bytes
// always survive.
func TestPowerImage(t *testing.T) {
	p := newPowerFS()
	if err := p.Create("f", bytes.Repeat([]byte{1}, 2*slotSize)); err != nil {
		t.Fatal(err)
	}
	f, _ := p.Open("f")
	f.WriteAt(bytes.Repeat([]byte{2}, slotSize), slotSize)
	r := rand.New(rand.NewPCG(3, 4))
	seen := map[string]bool{}
	for range 2000 {
		p.mu.Lock()
		file := p.image(r).files["f"]
		p.mu.Unlock()
		if file == nil {
			t.Fatal("a created file was lost")
		}
		img := file.durable
		if !bytes.Equal(img[:slotSize], bytes.Repeat([]byte{1}, slotSize)) {
			t.Fatal("the durable slot changed")
		}
		n := bytes.Count(img[slotSize:], []byte{2})
		prefix := bytes.Count(bytes.TrimRight(img[slotSize:], "\x01"), []byte{2}) == n && (n == 0 || img[slotSize] == 2)
		switch {
		case n == 0:
			seen["lost"] = true
		case n == slotSize:
			seen["kept"] = true
		case prefix && n%sectorSize == 0:
			seen["sector prefix"] = true
		case prefix:
			seen["byte prefix"] = true
		default:
			seen["sector subset"] = true
		}
	}
	if len(seen) != 5 {
		t.Fatalf("image kinds %v", seen)
	}
	f.Sync()
	p.mu.Lock()
	img := p.image(r).files["f"].durable
	p.mu.Unlock()
	if !bytes.Equal(img[slotSize:], bytes.Repeat([]byte{2}, slotSize)) {
		t.Fatal("a synced write was lost")
	}
}
