package frost

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"slices"
	"sync"
	"time"

	"filippo.io/edwards25519"
	"github.com/signerkit/signerkit/internal/statefile"
	"github.com/signerkit/signerkit/signer"
)

// The nonce file is a header and a fixed number of slots. A slot is empty,
// holds a fresh nonce pair, or holds a consumed one (its scalars zeroed).
// Generating writes fresh pairs into free slots and syncs once before any
// commitment is handed out. Signing first writes the slot as consumed and
// syncs, and only then computes the share, so a crash at any point leaves
// a nonce whose share may have left the process marked consumed. A write
// torn by a crash fails the slot's checksum, and such a slot is never used:
// it counts as free. Only a whole, checksummed slot marked fresh is used.
//
// Header (64 bytes): magic "frostnc1", identifier (uint16 BE), threshold
// (uint8), zero, slot count (uint32 BE), group public key (32), zeros,
// CRC-32C of bytes 0–59 at 60.
// Slot (80 bytes): state (1 fresh, 2 consumed), three zeros, generation
// (uint32 BE), hiding nonce (32), binding nonce (32), four zeros, CRC-32C
// of bytes 0–75 at 76.
const (
	nonceMagic      = "frostnc1"
	nonceHeaderSize = 64
	nonceSlotSize   = 80

	slotFresh    = 1
	slotConsumed = 2

	// DefaultNonceCapacity is the number of slots of a new nonce file when
	// NonceStoreConfig.Capacity is 0.
	DefaultNonceCapacity = 4096
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// NonceHandle names one stored nonce pair: its slot and the slot's
// generation, so a handle is not confused with a later pair in the same
// slot.
type NonceHandle uint64

func (h NonceHandle) slot() uint32 { return uint32(h) }
func (h NonceHandle) gen() uint32  { return uint32(h >> 32) }

func makeHandle(gen, slot uint32) NonceHandle { return NonceHandle(uint64(gen)<<32 | uint64(slot)) }

// Presigned is a stored nonce pair's public side: its handle and the
// commitments to publish.
type Presigned struct {
	Handle      NonceHandle
	Commitments SigningCommitments
}

// StorageError is a failure to read, write or sync the nonce file. After a
// failed write or sync the store refuses everything with this error until
// it is opened again. It unwraps to the underlying error.
type StorageError struct {
	Op  string
	Err error
}

// Error describes the failure.
func (e *StorageError) Error() string { return fmt.Sprintf("frost: nonce store: %s: %v", e.Op, e.Err) }

// Unwrap returns Err.
func (e *StorageError) Unwrap() error { return e.Err }

// FS is where a NonceStore keeps its file: the same type as guard.FS
// (guard.DirFS for a directory, guard.MemFS in memory), defined in an
// internal package so that this package does not depend on guard.
type FS = statefile.FS

// File is an open nonce file: the same type as guard.File.
type File = statefile.File

// NonceStoreConfig says where a NonceStore keeps its file.
type NonceStoreConfig struct {
	// FS holds the nonce file: guard.DirFS(dir) for a real directory
	// (it locks the file, so two processes cannot share it), a test FS to
	// inject failures.
	FS FS
	// Name is the file's name in FS; empty means "nonces-<id>".
	Name string
	// Capacity is the number of slots of a new file (the most nonce pairs
	// outstanding at once); 0 means DefaultNonceCapacity. An existing file
	// keeps its own.
	Capacity int
	// Rand is the randomness for new nonces; nil means crypto/rand.
	Rand io.Reader
}

// NonceStore keeps one participant's nonce pairs in a file so that each is
// used in at most one signature share, even across crashes: a pair is
// marked consumed on disk, and the mark synced, before the share computed
// with it exists. It is safe for concurrent use; concurrent signs share
// syncs (group commit).
//
// The file holds the secret nonces in the clear: a nonce and the share
// made with it give away the participant's secret share, so the file is
// as secret as the key share (guard.DirFS creates it with mode 0600).
type NonceStore struct {
	key  *KeyPackage
	rand io.Reader

	mu      sync.Mutex
	f       File
	fresh   map[uint32]*storedNonce // by slot
	free    []uint32
	gens    []uint32 // last generation written per slot
	broken  error
	closed  bool
	written uint64 // writes issued so far

	syncMu sync.Mutex
	synced uint64 // writes covered by a successful sync
}

type storedNonce struct {
	gen    uint32
	nonces *SigningNonces
	made   time.Time // when Generate wrote it, or the store was opened
}

// OpenNonceStore opens the nonce file for key k, creating it if missing.
// A file made for another key or participant is refused with an error
// wrapping signer.ErrInvalidKey; a damaged header with a *CorruptError.
func OpenNonceStore(k *KeyPackage, cfg NonceStoreConfig) (*NonceStore, error) {
	if cfg.FS == nil {
		return nil, invalidArgument("NonceStoreConfig.FS is nil")
	}
	name := cfg.Name
	if name == "" {
		name = fmt.Sprintf("nonces-%d", k.id)
	}
	capacity := cfg.Capacity
	if capacity == 0 {
		capacity = DefaultNonceCapacity
	}
	if capacity < 1 || capacity > 1<<24 {
		return nil, invalidArgument("nonce store capacity %d", capacity)
	}
	r := cfg.Rand
	if r == nil {
		r = cryptoRand
	}
	want := nonceHeader(k, uint32(capacity))
	f, err := cfg.FS.Open(name)
	if errors.Is(err, fs.ErrNotExist) {
		if err := cfg.FS.Create(name, append(want, make([]byte, capacity*nonceSlotSize)...)); err != nil && !errors.Is(err, fs.ErrExist) {
			return nil, &StorageError{Op: "create", Err: err}
		}
		f, err = cfg.FS.Open(name)
	}
	if err != nil {
		return nil, &StorageError{Op: "open", Err: err}
	}
	s := &NonceStore{key: k, rand: r, f: f, fresh: map[uint32]*storedNonce{}}
	if err := s.load(want); err != nil {
		f.Close()
		return nil, err
	}
	return s, nil
}

// CorruptError says the nonce file's header is damaged or not a nonce
// file's. It wraps signer.ErrCorrupt.
type CorruptError struct{ Reason string }

// Error describes the damage.
func (e *CorruptError) Error() string {
	return fmt.Sprintf("frost: nonce store: %s: %v", e.Reason, signer.ErrCorrupt)
}

// Unwrap returns signer.ErrCorrupt.
func (e *CorruptError) Unwrap() error { return signer.ErrCorrupt }

func nonceHeader(k *KeyPackage, capacity uint32) []byte {
	h := make([]byte, nonceHeaderSize)
	copy(h, nonceMagic)
	binary.BigEndian.PutUint16(h[8:], uint16(k.id))
	h[10] = byte(k.minSigners)
	binary.BigEndian.PutUint32(h[12:], capacity)
	copy(h[16:48], k.group.Bytes())
	binary.BigEndian.PutUint32(h[60:], crc32.Checksum(h[:60], castagnoli))
	return h
}

func (s *NonceStore) load(want []byte) error {
	h := make([]byte, nonceHeaderSize)
	if _, err := s.f.ReadAt(h, 0); err != nil {
		return &CorruptError{Reason: "short header"}
	}
	if string(h[:8]) != nonceMagic || binary.BigEndian.Uint32(h[60:]) != crc32.Checksum(h[:60], castagnoli) {
		return &CorruptError{Reason: "not a nonce file, or its header is damaged"}
	}
	if !bytes.Equal(h[8:12], want[8:12]) || !bytes.Equal(h[16:48], want[16:48]) {
		return fmt.Errorf("frost: the nonce file belongs to another participant or key: %w", signer.ErrInvalidKey)
	}
	n := binary.BigEndian.Uint32(h[12:])
	if n == 0 || n > 1<<24 {
		return &CorruptError{Reason: fmt.Sprintf("slot count %d", n)}
	}
	body := make([]byte, int(n)*nonceSlotSize)
	if m, err := s.f.ReadAt(body, nonceHeaderSize); m != len(body) {
		return &CorruptError{Reason: fmt.Sprintf("truncated: %d of %d slot bytes (%v)", m, len(body), err)}
	}
	defer clear(body)
	now := time.Now()
	var loaded []*SigningNonces
	s.gens = make([]uint32, n)
	for i := range n {
		slot := body[int(i)*nonceSlotSize:][:nonceSlotSize]
		gen := binary.BigEndian.Uint32(slot[4:])
		s.gens[i] = gen
		ok := binary.BigEndian.Uint32(slot[76:]) == crc32.Checksum(slot[:76], castagnoli)
		if !ok || slot[0] != slotFresh {
			s.free = append(s.free, i)
			continue
		}
		hid, err1 := deserializeScalar(slot[8:40])
		bin, err2 := deserializeScalar(slot[40:72])
		if err1 != nil || err2 != nil || isZero(hid) || isZero(bin) {
			s.free = append(s.free, i)
			continue
		}
		nonces := &SigningNonces{hiding: hid, binding: bin, commitments: SigningCommitments{ID: s.key.id,
			Hiding: new(edwards25519.Point).ScalarBaseMult(hid), Binding: new(edwards25519.Point).ScalarBaseMult(bin)}}
		s.fresh[i] = &storedNonce{gen: gen, nonces: nonces, made: now}
		loaded = append(loaded, nonces)
	}
	encodeCommitments(loaded)
	return nil
}

func encodeSlot(state byte, gen uint32, n *SigningNonces) []byte {
	return appendSlot(make([]byte, 0, nonceSlotSize), state, gen, n)
}

// appendSlot appends the encoding of a slot to dst.
func appendSlot(dst []byte, state byte, gen uint32, n *SigningNonces) []byte {
	dst = append(dst, make([]byte, nonceSlotSize)...)
	b := dst[len(dst)-nonceSlotSize:]
	b[0] = state
	binary.BigEndian.PutUint32(b[4:], gen)
	if n != nil {
		copy(b[8:40], n.hiding.Bytes())
		copy(b[40:72], n.binding.Bytes())
	}
	binary.BigEndian.PutUint32(b[76:], crc32.Checksum(b[:76], castagnoli))
	return dst
}

func (s *NonceStore) usable() error {
	switch {
	case s.closed:
		return fmt.Errorf("frost: nonce store: %w", signer.ErrClosed)
	case s.broken != nil:
		return s.broken
	}
	return nil
}

// Available returns how many fresh nonce pairs the store holds.
func (s *NonceStore) Available() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.fresh)
}

// Outstanding returns the public side of every fresh nonce pair, for a
// party that restarted to hand out again.
func (s *NonceStore) Outstanding() []Presigned {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Presigned, 0, len(s.fresh))
	for slot, n := range s.fresh {
		out = append(out, Presigned{Handle: makeHandle(n.gen, slot), Commitments: n.nonces.commitments})
	}
	return out
}

// Lookup returns the commitments of the fresh nonce pair h, or false if h
// is unknown or used.
func (s *NonceStore) Lookup(h NonceHandle) (SigningCommitments, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sn := s.fresh[h.slot()]
	if sn == nil || sn.gen != h.gen() {
		return SigningCommitments{}, false
	}
	return sn.nonces.commitments, true
}

// Generate makes up to n new nonce pairs (fewer when the file has fewer
// free slots), writes them and syncs the file once, and only then returns
// their commitments. When no slot is free (every slot holds a fresh pair
// handed out and neither used nor released) it returns a
// *NonceStoreFullError.
func (s *NonceStore) Generate(n int) ([]Presigned, error) {
	made := make([]*SigningNonces, 0, n)
	for range n {
		nc, err := Commit(s.key, s.rand)
		if err != nil {
			for _, m := range made {
				m.Wipe()
			}
			return nil, err
		}
		made = append(made, nc)
	}
	// Their encodings, which the party sends and every sign with them
	// hashes, made once, with one field inversion for the batch.
	encodeCommitments(made)
	s.mu.Lock()
	if err := s.usable(); err != nil {
		s.mu.Unlock()
		for _, m := range made {
			m.Wipe()
		}
		return nil, err
	}
	if len(made) > 0 && len(s.free) == 0 {
		err := &NonceStoreFullError{Capacity: len(s.gens), Fresh: len(s.fresh)}
		s.mu.Unlock()
		for _, m := range made {
			m.Wipe()
		}
		return nil, err
	}
	k := min(len(made), len(s.free))
	for _, m := range made[k:] {
		m.Wipe()
	}
	made = made[:k]
	// A copy, not a view: the store is unlocked for the sync below, and a
	// Sign that frees its slot meanwhile appends to s.free, which would
	// overwrite a view's elements and file these nonces under other slots.
	slots := slices.Clone(s.free[len(s.free)-k:])
	s.free = s.free[:len(s.free)-k]
	// In slot order, so that adjacent slots (the free list mostly holds
	// runs) go to the file in one write per run rather than one per slot.
	slices.Sort(slots)
	out := make([]Presigned, k)
	buf := make([]byte, 0, k*nonceSlotSize)
	var err error
	for i, m := range made {
		slot := slots[i]
		s.gens[slot]++
		gen := s.gens[slot]
		buf = appendSlot(buf, slotFresh, gen, m)
		out[i] = Presigned{Handle: makeHandle(gen, slot), Commitments: m.commitments}
		if i+1 == k || slots[i+1] != slot+1 {
			first := slot + 1 - uint32(len(buf)/nonceSlotSize)
			_, err = s.f.WriteAt(buf, nonceHeaderSize+int64(first)*nonceSlotSize)
			clear(buf)
			buf = buf[:0]
			if err != nil {
				break
			}
		}
	}
	if err != nil {
		s.broken = &StorageError{Op: "write", Err: err}
		s.mu.Unlock()
		for _, m := range made {
			m.Wipe()
		}
		return nil, s.broken
	}
	s.written++
	upTo := s.written
	s.mu.Unlock()
	if err := s.sync(upTo); err != nil {
		for _, m := range made {
			m.Wipe()
		}
		return nil, err
	}
	s.mu.Lock()
	// The store was unlocked for the sync: a Close meanwhile wiped and
	// dropped the fresh map. The pairs are written fresh in the file,
	// never handed out, and found again by the next open.
	if err := s.usable(); err != nil {
		s.mu.Unlock()
		for _, m := range made {
			m.Wipe()
		}
		return nil, err
	}
	now := time.Now()
	for i, m := range made {
		s.fresh[slots[i]] = &storedNonce{gen: out[i].Handle.gen(), nonces: m, made: now}
	}
	s.mu.Unlock()
	return out, nil
}

// sync makes every write up to number upTo durable, sharing one sync
// among concurrent callers.
func (s *NonceStore) sync(upTo uint64) error {
	s.syncMu.Lock()
	defer s.syncMu.Unlock()
	if s.synced >= upTo {
		return nil
	}
	s.mu.Lock()
	if err := s.usable(); err != nil {
		s.mu.Unlock()
		return err
	}
	covered := s.written
	s.mu.Unlock()
	if err := s.f.Sync(); err != nil {
		s.mu.Lock()
		s.broken = &StorageError{Op: "sync", Err: err}
		s.mu.Unlock()
		return s.broken
	}
	s.synced = covered
	return nil
}

// Sign computes the participant's signature share for msg with the nonce
// pair h, after checking the request (list sorted, the pair's commitments
// in it) and durably marking the pair consumed. A pair that is unknown or
// already used gives an error wrapping ErrNonceUsed. A request refused
// before the mark (a malformed list) leaves the pair fresh.
func (s *NonceStore) Sign(h NonceHandle, msg []byte, list []SigningCommitments) (SignatureShare, error) {
	// The list is checked here, once: the share is then computed without
	// checking it again (frost.Sign checks for its direct callers).
	if err := checkCommitmentList(list, s.key.minSigners); err != nil {
		return SignatureShare{}, err
	}
	return s.sign(h, msg, nil, func(own SigningCommitments) ([]SigningCommitments, int, error) {
		i := indexOf(list, s.key.id)
		if i < 0 || !list[i].Equal(own) {
			return nil, -1, invalidArgument("participant %d's commitments for nonce %#x are not in the commitment list", s.key.id, uint64(h))
		}
		return list, i, nil
	})
}

// SignAmong is Sign with the commitment list made of others, the other
// signers' commitments in any order, and the pair h's own commitments:
// for a party that is sent the others only, it looks the pair up once.
// others must not hold the participant's own identifier.
func (s *NonceStore) SignAmong(h NonceHandle, msg []byte, others []SigningCommitments) (SignatureShare, error) {
	return s.SignAmongGated(h, msg, others, nil)
}

// SignAmongGated is SignAmong with a gate: once the pair is marked
// consumed, gate runs while the mark is synced and the share computed, the
// three at once, and the share is returned only if gate and the sync both
// succeed. A gate that fails makes the call return its error, with the
// pair consumed and the share wiped. A party's guard is such a gate: it
// records the message durably before any share of it leaves, and its
// sync no longer waits for the nonce store's. A nil gate is SignAmong.
func (s *NonceStore) SignAmongGated(h NonceHandle, msg []byte, others []SigningCommitments, gate func() error) (SignatureShare, error) {
	list := make([]SigningCommitments, len(others), len(others)+1)
	copy(list, others)
	SortCommitments(list)
	return s.sign(h, msg, gate, func(own SigningCommitments) ([]SigningCommitments, int, error) {
		i, _ := slices.BinarySearchFunc(list, own.ID, func(c SigningCommitments, id Identifier) int { return int(c.ID) - int(id) })
		list := slices.Insert(list, i, own)
		if err := checkCommitmentList(list, s.key.minSigners); err != nil {
			return nil, -1, err
		}
		return list, i, nil
	})
}

// sign is Sign and SignAmong: with the store locked, it looks h up and
// has check make the commitment list from the pair's own commitments (or
// refuse the request, leaving the pair fresh) and say where they are in
// it; then it marks the pair consumed, and syncs the mark, runs gate (when
// not nil) and computes the share at once. The share is returned only
// once the mark is durable and gate has succeeded.
func (s *NonceStore) sign(h NonceHandle, msg []byte, gate func() error, check func(own SigningCommitments) ([]SigningCommitments, int, error)) (SignatureShare, error) {
	s.mu.Lock()
	if err := s.usable(); err != nil {
		s.mu.Unlock()
		return SignatureShare{}, err
	}
	sn := s.fresh[h.slot()]
	if sn == nil || sn.gen != h.gen() {
		s.mu.Unlock()
		return SignatureShare{}, fmt.Errorf("frost: participant %d, nonce %#x: %w", s.key.id, uint64(h), ErrNonceUsed)
	}
	list, i, err := check(sn.nonces.commitments)
	if err != nil {
		s.mu.Unlock()
		return SignatureShare{}, err
	}
	delete(s.fresh, h.slot())
	b := encodeSlot(slotConsumed, sn.gen, nil)
	_, err = s.f.WriteAt(b, nonceHeaderSize+int64(h.slot())*nonceSlotSize)
	if err != nil {
		s.broken = &StorageError{Op: "write", Err: err}
		s.mu.Unlock()
		sn.nonces.Wipe()
		return SignatureShare{}, s.broken
	}
	s.written++
	upTo := s.written
	s.mu.Unlock()
	defer sn.nonces.Wipe()
	gated := make(chan error, 1)
	if gate != nil {
		go func() { gated <- gate() }()
	} else {
		gated <- nil
	}
	synced := make(chan error, 1)
	go func() { synced <- s.sync(upTo) }()
	share, err := signChecked(s.key, sn.nonces, msg, list, i)
	serr, gerr := <-synced, <-gated
	if serr != nil {
		return SignatureShare{}, serr
	}
	s.mu.Lock()
	s.free = append(s.free, h.slot())
	s.mu.Unlock()
	if gerr != nil {
		return SignatureShare{}, gerr
	}
	return share, err
}

// Close wipes the nonces held in memory and closes the file. The fresh
// pairs stay in the file for the next open.
func (s *NonceStore) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	for _, n := range s.fresh {
		n.nonces.Wipe()
	}
	s.fresh = nil
	return s.f.Close()
}

// NonceStoreFullError says Generate found no free slot: all Capacity slots
// hold fresh pairs, handed out but neither used in a Sign nor released
// (Release, ReleaseOlderThan). It wraps signer.ErrBusy.
type NonceStoreFullError struct {
	Capacity, Fresh int
}

// Error says how full the store is.
func (e *NonceStoreFullError) Error() string {
	return fmt.Sprintf("frost: nonce store full: no free slot of %d (%d fresh pairs handed out and not used or released): %v", e.Capacity, e.Fresh, signer.ErrBusy)
}

// Unwrap returns signer.ErrBusy.
func (e *NonceStoreFullError) Unwrap() error { return signer.ErrBusy }

// NonceStats counts a nonce store's slots.
type NonceStats struct {
	Capacity int // slots in the file
	Fresh    int // pairs made and neither used nor released
	Free     int // slots Generate may fill
}

// Stats returns the store's slot counts.
func (s *NonceStore) Stats() NonceStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return NonceStats{Capacity: len(s.gens), Fresh: len(s.fresh), Free: len(s.free)}
}

// Release discards the fresh pairs hs without signing, for a coordinator
// that dropped their commitments: each is marked consumed in the file,
// synced once for all, before its slot is free again, so a commitment
// already handed out can never be signed with after its slot is reused.
// Handles unknown or already used are skipped. It returns how many pairs
// it released.
func (s *NonceStore) Release(hs ...NonceHandle) (int, error) {
	return s.release(func(slot uint32, sn *storedNonce) bool {
		return false
	}, hs)
}

// ReleaseOlderThan releases (as Release does) every fresh pair made more
// than age ago, or loaded from the file more than age ago: pairs whose
// commitments were lost on the way (a presign answer that timed out) or
// dropped by a coordinator without a release.
func (s *NonceStore) ReleaseOlderThan(age time.Duration) (int, error) {
	cutoff := time.Now().Add(-age)
	return s.release(func(_ uint32, sn *storedNonce) bool { return sn.made.Before(cutoff) }, nil)
}

// release marks consumed the pairs named by hs, and those old says to.
func (s *NonceStore) release(old func(uint32, *storedNonce) bool, hs []NonceHandle) (int, error) {
	s.mu.Lock()
	if err := s.usable(); err != nil {
		s.mu.Unlock()
		return 0, err
	}
	var slots []uint32
	var pairs []*SigningNonces
	take := func(slot uint32, sn *storedNonce) error {
		delete(s.fresh, slot)
		pairs = append(pairs, sn.nonces)
		if _, err := s.f.WriteAt(encodeSlot(slotConsumed, sn.gen, nil), nonceHeaderSize+int64(slot)*nonceSlotSize); err != nil {
			s.broken = &StorageError{Op: "write", Err: err}
			return s.broken
		}
		slots = append(slots, slot)
		return nil
	}
	var err error
	for _, h := range hs {
		if sn := s.fresh[h.slot()]; sn != nil && sn.gen == h.gen() {
			if err = take(h.slot(), sn); err != nil {
				break
			}
		}
	}
	if err == nil && hs == nil {
		for slot, sn := range s.fresh {
			if old(slot, sn) {
				if err = take(slot, sn); err != nil {
					break
				}
			}
		}
	}
	wipe := func() {
		for _, n := range pairs {
			n.Wipe()
		}
	}
	if err != nil {
		s.mu.Unlock()
		wipe()
		return 0, err
	}
	if len(slots) == 0 {
		s.mu.Unlock()
		return 0, nil
	}
	s.written++
	upTo := s.written
	s.mu.Unlock()
	wipe()
	if err := s.sync(upTo); err != nil {
		return 0, err
	}
	s.mu.Lock()
	if !s.closed {
		s.free = append(s.free, slots...)
	}
	s.mu.Unlock()
	return len(slots), nil
}
