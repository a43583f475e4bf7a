package daemon

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/signerkit/signerkit/guard"
	"github.com/signerkit/signerkit/internal/fileopen"
	"github.com/signerkit/signerkit/signbytes"
	"github.com/signerkit/signerkit/signer"
)

// InflightFile is the file in the state directory that holds, for each
// chain, the sign bytes the backend was last asked to sign, marked in
// flight while it signs, and a sign whose answer was lost. It is
// diagnostics only: the double-sign guarantee rests on the guard's state,
// never on it.
//
// A device that keeps its own double-sign state (the Ledger validator
// app) moves it when it signs, before its answer leaves. When the daemon
// is killed in that window, or the answer is lost on the way (a timeout,
// a dropped connection), the signature is gone, the guard never recorded
// it, and the device refuses that height/round/step for good
// (docs/daemon.md#a-crash-during-a-ledger-sign). The marker is what lets
// the daemon say so when the device refuses it, instead of logging a
// plain refusal.
//
// A marker is written with one pwrite and no sync before each backend
// sign: the page cache of a killed process survives it, and a power cut
// that loses a marker loses only the explanation. The sign bytes are
// stored as they are and parsed only when a marker is read back. A sign
// that returns a signature writes nothing more (the guard's record,
// synced right after, supersedes the marker: a height/round/step the
// guard recorded never reaches the device again); one that fails writes
// once more, to say whether its answer was lost or the device refused.
const InflightFile = "signerkit-inflight"

// The marker file is one slot of markerSlotSize bytes per chain of the
// config, in config order; a write covers only the marker:
//
//	0    "SKIF"
//	4    version (1)
//	5    state: markerInFlight, markerLost or markerRefused
//	6    length of the cause (a lost sign's Cause), at most markerCauseLen
//	8    when the sign started: Unix nanoseconds, int64 big-endian
//	16   length n of the sign bytes, uint16 big-endian
//	18   cause, zero-padded
//	64   the sign bytes
//	64+n CRC-32C of bytes 0 to 64+n
const (
	markerSlotSize = 4096
	markerHeader   = 64
	markerMaxMsg   = markerSlotSize - markerHeader - 4
	markerCauseLen = markerHeader - 18
	markerVersion  = 1

	markerInFlight = 1 // the sign started and had not returned
	markerLost     = 2 // the sign ended without the device's answer
	markerRefused  = 3 // the device answered with a refusal: it did not sign

	// markerKilled is the cause of a sign found in flight at start.
	markerKilled = "killed"
)

var markerCRC = crc32.MakeTable(crc32.Castagnoli)

// encodeMarker writes a marker into b and returns its length.
func encodeMarker(b *[markerSlotSize]byte, state byte, at time.Time, cause string, msg []byte) int {
	cause = cause[:min(len(cause), markerCauseLen)]
	clear(b[:markerHeader])
	copy(b[0:4], "SKIF")
	b[4], b[5], b[6] = markerVersion, state, byte(len(cause))
	binary.BigEndian.PutUint64(b[8:], uint64(at.UnixNano()))
	binary.BigEndian.PutUint16(b[16:], uint16(len(msg)))
	copy(b[18:], cause)
	n := markerHeader + copy(b[markerHeader:], msg)
	binary.BigEndian.PutUint32(b[n:], crc32.Checksum(b[:n], markerCRC))
	return n + 4
}

// marker is a decoded marker of a vote or proposal.
type marker struct {
	state byte
	at    time.Time
	cause string
	msg   []byte
	m     signbytes.Message
}

// decodeMarker reads the marker at the start of b; ok is false for an
// empty, torn or damaged one, and for sign bytes that are not a vote or
// proposal (a vote extension).
func decodeMarker(b []byte) (mk marker, ok bool) {
	if len(b) < markerHeader+4 || string(b[0:4]) != "SKIF" || b[4] != markerVersion {
		return marker{}, false
	}
	n, cn := int(binary.BigEndian.Uint16(b[16:])), int(b[6])
	if n > markerMaxMsg || len(b) < markerHeader+n+4 || cn > markerCauseLen || b[5] < markerInFlight || b[5] > markerRefused ||
		binary.BigEndian.Uint32(b[markerHeader+n:]) != crc32.Checksum(b[:markerHeader+n], markerCRC) {
		return marker{}, false
	}
	msg := bytes.Clone(b[markerHeader : markerHeader+n])
	m, err := signbytes.Parse(msg)
	if err != nil || m.Phase == signbytes.VoteExtension {
		return marker{}, false
	}
	return marker{state: b[5], at: time.Unix(0, int64(binary.BigEndian.Uint64(b[8:]))), cause: string(b[18 : 18+cn]), msg: msg, m: m}, true
}

func (mk *marker) sameHRS(o *marker) bool {
	return mk.m.ChainID == o.m.ChainID && mk.m.Height == o.m.Height && mk.m.Round == o.m.Round && mk.m.Step() == o.m.Step()
}

// above reports whether mk's height/round/step is above the state's: a
// sign the guard did not record.
func (mk *marker) above(st guard.State) bool {
	switch {
	case mk.m.Height != st.Height:
		return mk.m.Height > st.Height
	case mk.m.Round != st.Round:
		return mk.m.Round > st.Round
	}
	return mk.m.Step() > st.Step
}

// inflight keeps the markers of the daemon's chains: in the state
// directory's InflightFile, or, when the state is not in a directory
// (Options.StateFS), in memory only.
type inflight struct {
	f      *os.File // nil: memory only
	path   string
	log    *slog.Logger
	lost   *prometheus.CounterVec // chain, phase
	slots  map[string]*markerSlot // by chain id; fixed once New returns
	warned atomic.Bool            // a failed write was logged
}

// markerSlot is one chain's marker. The guard serialises a chain's
// signs, so mu is held by one sign at a time, from begin to end.
type markerSlot struct {
	off  int64
	mu   sync.Mutex
	buf  [markerSlotSize]byte
	n    int     // the length of the marker in buf
	lost *marker // a vote or proposal whose answer was lost, or nil
}

// openInflight reads the markers the previous run left in the state
// directory and writes them back, one slot per chain, and gives the
// backends the result. A chain's marker of a sign the guard has not
// recorded (its height/round/step is above the state's) is a sign whose
// answer was lost: logged now, and named again if the device refuses it.
// It never fails: a file it cannot use is logged and the markers are kept
// in memory, and is not made when no backend keeps its own sign state (a
// Ledger's app), the only backends that mark their signs. New calls it
// once the guards hold their state files.
func (d *Daemon) openInflight(ctx context.Context, memOnly bool) {
	in := &inflight{log: d.log, lost: d.m.lostSigns, slots: make(map[string]*markerSlot, len(d.cfg.Chains))}
	d.inflight = in
	for _, b := range d.keys {
		b.inflight = in
	}
	keyOf := map[string]string{}
	for _, ch := range d.cfg.Chains {
		if in.slots[ch.ID] == nil {
			in.slots[ch.ID] = &markerSlot{off: int64(len(in.slots)) * markerSlotSize}
			keyOf[ch.ID] = ch.Key
		}
	}
	if memOnly || !d.anyOwnState() {
		return // no backend marks its signs: no file to keep
	}
	log := d.log
	in.path = filepath.Join(d.cfg.StateDir, InflightFile)
	f, _, err := fileopen.Open(in.path, os.O_RDWR|os.O_CREATE, 0o600, fileopen.NoFollow)
	if err != nil {
		log.Warn("the in-flight marker file cannot be opened (a sign lost to a crash will be reported as a plain device refusal); not using it", "file", in.path, "err", err)
		return
	}
	old, err := io.ReadAll(io.LimitReader(f, int64(len(in.slots)+64)*markerSlotSize))
	if err != nil {
		log.Warn("the in-flight marker file cannot be read; starting it afresh", "file", in.path, "err", err)
	}
	for off := 0; off < len(old); off += markerSlotSize {
		mk, ok := decodeMarker(old[off:min(off+markerSlotSize, len(old))])
		s := in.slots[mk.m.ChainID]
		if !ok || s == nil || mk.state == markerRefused {
			continue
		}
		if st, err := d.gs[keyOf[mk.m.ChainID]].State(ctx, mk.m.ChainID); err != nil || !mk.above(st) {
			continue // the guard recorded it: it was signed and answered
		}
		if mk.state == markerInFlight {
			mk.cause = markerKilled
		}
		s.lost = &mk
		log.Warn("the previous run ended while the backend signed a vote or proposal the state does not hold (killed mid-sign, or its answer was lost); "+
			"if the device signed it, it refuses that height/round/step now and its signature is lost",
			"chain", mk.m.ChainID, "phase", mk.m.Phase.String(), "height", mk.m.Height, "round", mk.m.Round,
			"sign_started", mk.at.UTC().Format(time.RFC3339Nano), "cause", mk.cause, "doc", inflightDoc)
	}
	in.f = f
	for _, s := range in.slots {
		if s.lost != nil {
			s.n = encodeMarker(&s.buf, markerLost, s.lost.at, s.lost.cause, s.lost.msg)
		} else {
			clear(s.buf[:markerHeader])
			s.n = markerHeader
		}
		in.writeBuf(s)
	}
	if err := f.Truncate(int64(len(in.slots)) * markerSlotSize); err != nil {
		in.writeFailed(err)
	}
}

// inflightDoc is the operator's guide's section on a lost sign.
const inflightDoc = "docs/daemon.md#a-crash-during-a-ledger-sign"

// begin marks msg, which the backend is about to sign for chain, in
// flight: one pwrite. It returns the chain's slot, locked until end, or
// nil (nothing to end) for a nil inflight, an unknown chain, or a
// message too long to be a vote or proposal.
func (in *inflight) begin(chain string, msg []byte) *markerSlot {
	if in == nil || len(msg) > markerMaxMsg {
		return nil
	}
	s := in.slots[chain]
	if s == nil {
		return nil
	}
	s.mu.Lock()
	s.n = encodeMarker(&s.buf, markerInFlight, time.Now(), "", msg)
	in.writeBuf(s)
	return s
}

// end records how the sign begin returned s for ended. When the device
// refused, as a double sign, the height/round/step of a sign whose answer
// was lost (the previous run's, killed while the device signed, or this
// run's), it logs the cause at ERROR and counts it.
func (in *inflight) end(s *markerSlot, err error) {
	if s == nil {
		return
	}
	defer s.mu.Unlock()
	if err == nil {
		// The guard records this signature next, which supersedes the
		// marker; a lost one at a lower height/round/step is past.
		s.lost = nil
		return
	}
	cur, ok := decodeMarker(s.buf[:s.n])
	if !ok {
		return // not a vote or proposal: no height/round/step to lose
	}
	if answered(err) {
		if s.lost != nil && errors.Is(err, signer.ErrDoubleSign) && s.lost.sameHRS(&cur) {
			in.report(s.lost, &cur)
		}
	} else {
		cur.state, cur.cause = markerLost, Cause(err)
		s.lost = &cur
	}
	if s.lost != nil { // keep the explanation for a later refusal
		s.n = encodeMarker(&s.buf, markerLost, s.lost.at, s.lost.cause, s.lost.msg)
	} else {
		s.n = encodeMarker(&s.buf, markerRefused, cur.at, "", cur.msg)
	}
	in.writeBuf(s)
}

// answered reports whether err is the device's own answer, which means it
// did not sign: a refusal. Anything else (a timeout, a disconnect, a
// garbled reply) may have come after it signed.
func answered(err error) bool {
	for _, e := range []error{signer.ErrDoubleSign, signer.ErrRejected, signer.ErrInvalidMessage, signer.ErrMessageTooLarge,
		signer.ErrAppNotOpen, signer.ErrDeviceLocked, signer.ErrUnsupported} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// report logs the device's refusal of cur, at the height/round/step of
// the lost sign lost, and counts it.
func (in *inflight) report(lost, cur *marker) {
	phase := cur.m.Phase.String()
	in.lost.WithLabelValues(cur.m.ChainID, phase).Inc()
	started := lost.at.UTC().Format(time.RFC3339Nano)
	var how string
	if lost.cause == markerKilled {
		how = fmt.Sprintf("in the previous run of the daemon, which was killed while that sign was in flight (started at %s)", started)
	} else {
		how = fmt.Sprintf("for a sign started at %s whose answer never arrived (%s)", started, lost.cause)
	}
	in.log.Error(fmt.Sprintf("the device refused %s %d/%d of chain %s: it signed it %s; the signature is lost and cannot be made again (the chain needs the other validators' votes or a later round); see %s",
		phase, cur.m.Height, cur.m.Round, cur.m.ChainID, how, inflightDoc),
		"chain", cur.m.ChainID, "phase", phase, "height", cur.m.Height, "round", cur.m.Round,
		"sign_started", started, "cause", lost.cause, "same_sign_bytes", bytes.Equal(lost.msg, cur.msg))
}

// writeBuf writes s's marker to its slot: one pwrite, no sync.
func (in *inflight) writeBuf(s *markerSlot) {
	if in.f == nil {
		return
	}
	if _, err := in.f.WriteAt(s.buf[:s.n], s.off); err != nil {
		in.writeFailed(err)
	}
}

func (in *inflight) writeFailed(err error) {
	if !in.warned.Swap(true) {
		in.log.Warn("cannot write the in-flight marker file (a sign lost to a crash may be reported as a plain device refusal)", "file", in.path, "err", err)
	}
}

// close closes the file, leaving the markers in it.
func (in *inflight) close() {
	if in != nil && in.f != nil {
		_ = in.f.Close()
	}
}

// anyOwnState reports whether a backend keeps its own double-sign state.
func (d *Daemon) anyOwnState() bool {
	for _, b := range d.keys {
		if b.ownState {
			return true
		}
	}
	return false
}
