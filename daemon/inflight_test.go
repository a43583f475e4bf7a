package daemon

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/signerkit/signerkit/ledger"
	"github.com/signerkit/signerkit/ledger/ledgersim"
	"github.com/signerkit/signerkit/privval"
	"github.com/signerkit/signerkit/privval/privvaltest"
	"github.com/signerkit/signerkit/signbytes"
	"github.com/signerkit/signerkit/signer"
)

// logSink is a logger's output, safe to read while the daemon writes.
type logSink struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logSink) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logSink) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// lostSignMessage starts the ERROR line that names a lost sign.
const lostSignMessage = "the device refused prevote"

// ledgerRun is one run of the daemon, signing with a ledgersim device
// (its APDU face) for a gno validator: the device outlives the run, as a
// Ledger outlives a daemon that is killed and started again.
type ledgerRun struct {
	*fixture
	log *logSink
}

// startLedgerRun starts a daemon on cfg (a tm2-tmkms chain whose
// validator listens on ln) with dev as its key, and accepts its
// connection.
func startLedgerRun(t *testing.T, cfg *Config, ln *privvaltest.Listener, dev *ledgersim.Device) *ledgerRun {
	t.Helper()
	r := &ledgerRun{fixture: &fixture{t: t, ln: ln, dial: privval.GnoTMKMS, pub: dev.PublicKey(), cfg: cfg}, log: &logSink{}}
	open := func(ctx context.Context, _ string) (signer.Signer, error) {
		return ledger.Open(ctx, ledger.Config{Dial: dev.Dialer()})
	}
	log := slog.New(slog.NewTextHandler(r.log, &slog.HandlerOptions{Level: slog.LevelDebug}))
	if err := r.start(Options{Open: open, Logger: log}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := ln.Accept(ctx)
	if err != nil {
		t.Fatal(err)
	}
	r.c = c
	t.Cleanup(func() { c.Close() })
	return r
}

// stop shuts the run down cleanly and closes its connection.
func (r *ledgerRun) stop() {
	r.shutdown()
	r.c.Close()
}

func ledgerConfig(t *testing.T, signTimeout time.Duration) (*Config, *privvaltest.Listener) {
	t.Helper()
	ln, err := privvaltest.NewListener("unix", privval.GnoTMKMS)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	cfg := newConfig(t, t.TempDir(), "unused", ProtocolTM2TMKMS, "unix://"+ln.Address())
	cfg.Chains[0].Key = "ledger:"
	cfg.Chains[0].SignTimeout = signTimeout
	if err := InitState(context.Background(), cfg.StateDir, chainID, 1); err != nil {
		t.Fatal(err)
	}
	return cfg, ln
}

// lostPrevote is the prevote at h the tests lose, and its sign bytes.
func lostPrevote(t *testing.T, h int64) (*privvaltest.Vote, []byte) {
	t.Helper()
	v := &privvaltest.Vote{Phase: signbytes.Prevote, Height: h, BlockID: block(h, 1), Timestamp: baseTime, ValidatorAddress: make([]byte, 20)}
	sb, err := signbytes.Message{Format: signbytes.TM2, Phase: signbytes.Prevote, ChainID: chainID, Height: h, BlockID: v.BlockID, Timestamp: baseTime}.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	return v, sb
}

func (r *ledgerRun) signVote(v *privvaltest.Vote) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	got, err := r.c.SignVote(ctx, chainID, v)
	if err == nil {
		sb, _ := signbytes.Message{Format: signbytes.TM2, Phase: v.Phase, ChainID: chainID, Height: v.Height, Round: int64(v.Round), BlockID: v.BlockID, Timestamp: got.Timestamp}.Bytes()
		if !ed25519.Verify(r.pub, sb, got.Signature) {
			r.t.Fatalf("height %d %v: the signature does not verify", v.Height, v.Phase)
		}
	}
	return err
}

// wantLostSignReported checks that the run refused v, logged the cause at
// ERROR and counted it n times in all.
func (r *ledgerRun) wantLostSignReported(v *privvaltest.Vote, cause string, n float64) {
	r.t.Helper()
	err := r.signVote(v)
	var rse *privvaltest.RemoteSignerError
	if !errors.As(err, &rse) {
		r.t.Fatalf("the lost prevote at %d, asked again: %v, want a RemoteSignerError", v.Height, err)
	}
	log := r.log.String()
	var line string
	for _, l := range strings.Split(log, "\n") {
		if strings.Contains(l, lostSignMessage) {
			line = l
		}
	}
	if !strings.Contains(line, "level=ERROR") || !strings.Contains(line, "the signature is lost") ||
		!strings.Contains(line, inflightDoc) || !strings.Contains(line, "cause="+cause) {
		r.t.Errorf("no ERROR naming the lost sign (cause %s); log:\n%s", cause, log)
	}
	if got := metric(r.scrape(), "signerkit_device_refused_inflight_total", "chain", chainID, "phase", "prevote"); got != n {
		r.t.Errorf("signerkit_device_refused_inflight_total = %v, want %v", got, n)
	}
}

// TestLostSignAfterRestart: a run ends while the device signs a prevote
// (the backend has marked it in flight, the device has signed, the
// answer never reaches the guard; here the marker is made as the backend
// makes it and the run is then stopped without it, which is what a
// SIGKILL leaves on disk). The next run warns at start; when the
// validator asks for that prevote again and the device refuses it, the
// daemon logs the cause at ERROR and counts it.
// cmd/signerkit's TestSIGKILLDuringLedgerSign kills a real process.
func TestLostSignAfterRestart(t *testing.T) {
	t.Parallel()
	dev := ledgersim.MustNew(ledgersim.Config{Time: ledgersim.Accounted})
	cfg, ln := ledgerConfig(t, 0)
	a := startLedgerRun(t, cfg, ln, dev)
	first, _ := lostPrevote(t, 1)
	if err := a.signVote(first); err != nil {
		t.Fatal(err)
	}
	v, sb := lostPrevote(t, 2)
	if a.d.inflight.begin(chainID, sb) == nil {
		t.Fatal("no marker for a prevote")
	}
	direct, err := ledger.Open(context.Background(), ledger.Config{Dial: dev.Dialer()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := direct.SignContext(context.Background(), sb); err != nil {
		t.Fatal(err)
	}
	direct.Close()
	a.stop()
	if strings.Contains(a.log.String(), lostSignMessage) {
		t.Fatalf("a lost sign reported before it was asked again:\n%s", a.log)
	}

	b := startLedgerRun(t, cfg, ln, dev)
	if !strings.Contains(b.log.String(), "the previous run ended while the backend signed") {
		t.Errorf("no warning at start; log:\n%s", b.log)
	}
	b.wantLostSignReported(v, "killed", 1)
	if !strings.Contains(b.log.String(), "in the previous run of the daemon, which was killed while that sign was in flight") {
		t.Errorf("the ERROR does not say the daemon was killed:\n%s", b.log)
	}
	// The node asks once more (CometBFT may): reported again.
	b.wantLostSignReported(v, "killed", 2)
	// The next step signs, and the lost prevote is forgotten.
	next := *v
	next.Phase = signbytes.Precommit
	if err := b.signVote(&next); err != nil {
		t.Fatalf("the precommit after the lost prevote: %v", err)
	}
	b.stop()
	c := startLedgerRun(t, cfg, ln, dev)
	if strings.Contains(c.log.String(), "the previous run ended while") {
		t.Errorf("a warning at start after a clean stop with everything recorded:\n%s", c.log)
	}
	c.stop()
}

// TestLostSignAfterTimeout: the device signs a prevote whose answer the
// daemon gives up on (a sign_timeout shorter than the device's sign); the
// node asking for it again is refused by the device, and the daemon names
// the cause, in this run and in the next.
func TestLostSignAfterTimeout(t *testing.T) {
	t.Parallel()
	slow := ledgersim.NanoSPlus
	slow.Sign = time.Hour // modeled, not slept: longer than any sign_timeout
	dev := ledgersim.MustNew(ledgersim.Config{Time: ledgersim.Accounted, Profile: slow})
	cfg, ln := ledgerConfig(t, 2*time.Second)
	a := startLedgerRun(t, cfg, ln, dev)
	v, _ := lostPrevote(t, 1)
	var rse *privvaltest.RemoteSignerError
	if err := a.signVote(v); !errors.As(err, &rse) {
		t.Fatalf("a one-hour sign under a 2 s sign_timeout: %v, want a RemoteSignerError", err)
	}
	if st := dev.Stats(); st.Signatures != 1 {
		t.Fatalf("device %+v: the device did not sign", st)
	}
	a.wantLostSignReported(v, "timeout", 1)
	if !strings.Contains(a.log.String(), "whose answer never arrived (timeout)") {
		t.Errorf("the ERROR does not say the answer was lost:\n%s", a.log)
	}
	a.stop()
	b := startLedgerRun(t, cfg, ln, dev)
	b.wantLostSignReported(v, "timeout", 1)
	b.stop()
}

// TestDeviceRefusalNotLost: a device refusal of a height/round/step the
// daemon never had in flight (another client moved the app past it) is a
// plain refusal: no ERROR naming a lost sign, no count.
func TestDeviceRefusalNotLost(t *testing.T) {
	t.Parallel()
	dev := ledgersim.MustNew(ledgersim.Config{Time: ledgersim.Accounted})
	cfg, ln := ledgerConfig(t, 0)
	r := startLedgerRun(t, cfg, ln, dev)
	v, sb := lostPrevote(t, 3)
	direct, err := ledger.Open(context.Background(), ledger.Config{Dial: dev.Dialer()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := direct.SignContext(context.Background(), sb); err != nil {
		t.Fatal(err)
	}
	direct.Close()
	var rse *privvaltest.RemoteSignerError
	if err := r.signVote(v); !errors.As(err, &rse) {
		t.Fatalf("a prevote the device signed for another client: %v, want a RemoteSignerError", err)
	}
	if strings.Contains(r.log.String(), lostSignMessage) {
		t.Errorf("a plain device refusal reported as a lost sign:\n%s", r.log)
	}
	if got := metric(r.scrape(), "signerkit_device_refused_inflight_total", "chain", chainID); got > 0 {
		t.Errorf("signerkit_device_refused_inflight_total = %v", got)
	}
	r.stop()
	// Refused by the device, it was never lost: the next run does not warn.
	r2 := startLedgerRun(t, cfg, ln, dev)
	if strings.Contains(r2.log.String(), "the previous run ended while") {
		t.Errorf("a warning at start for a sign the device refused:\n%s", r2.log)
	}
	r2.stop()
}

// TestMarkerEncoding: a marker decodes to what was encoded; a flipped bit
// anywhere in it, a torn or an empty one, or one of a vote extension,
// decodes to nothing.
func TestMarkerEncoding(t *testing.T) {
	_, msg := lostPrevote(t, 1<<40)
	at := time.Unix(0, 1767225600123456789)
	var b [markerSlotSize]byte
	n := encodeMarker(&b, markerLost, at, "device_not_found", msg)
	if n != markerHeader+len(msg)+4 {
		t.Fatalf("marker of %d bytes for %d bytes of sign bytes", n, len(msg))
	}
	got, ok := decodeMarker(b[:n])
	if !ok || got.state != markerLost || !got.at.Equal(at) || got.cause != "device_not_found" || !bytes.Equal(got.msg, msg) ||
		got.m.ChainID != chainID || got.m.Height != 1<<40 || got.m.Phase != signbytes.Prevote {
		t.Fatalf("decoded %+v, %v", got, ok)
	}
	for i := range n * 8 {
		c := b
		c[i/8] ^= 1 << (i % 8)
		if _, ok := decodeMarker(c[:]); ok {
			t.Fatalf("bit %d flipped: decoded", i)
		}
	}
	for i := range n {
		if _, ok := decodeMarker(b[:i]); ok {
			t.Fatalf("torn at %d bytes: decoded", i)
		}
	}
	if _, ok := decodeMarker(make([]byte, markerSlotSize)); ok {
		t.Fatal("an empty slot decoded")
	}
	ext, err := signbytes.Message{Format: signbytes.CometBFT, Phase: signbytes.VoteExtension, ChainID: chainID, Height: 5, Extension: []byte("x")}.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := decodeMarker(b[:encodeMarker(&b, markerInFlight, at, "", ext)]); ok {
		t.Fatal("a vote extension's marker decoded")
	}
	long := strings.Repeat("x", 100)
	if got, _ := decodeMarker(b[:encodeMarker(&b, markerLost, at, long, msg)]); got.cause != long[:markerCauseLen] {
		t.Fatalf("a long cause decoded as %q", got.cause)
	}
}

// TestNoMarkerFileWithoutDevice: a daemon whose keys keep no sign state
// of their own (in process here) makes no marker file.
func TestNoMarkerFileWithoutDevice(t *testing.T) {
	t.Parallel()
	f := newFixture(t, ProtocolCometBFT038, privval.V038)
	if _, err := os.Stat(filepath.Join(f.cfg.StateDir, InflightFile)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("an in-process key's daemon made %s: %v", InflightFile, err)
	}
}

// TestMarkerFile: the marker file holds one slot per chain, mode 0600; a
// symlink in its place is not followed.
func TestMarkerFile(t *testing.T) {
	t.Parallel()
	dev := ledgersim.MustNew(ledgersim.Config{Time: ledgersim.Accounted})
	cfg, ln := ledgerConfig(t, 0)
	p := filepath.Join(cfg.StateDir, InflightFile)
	target := filepath.Join(t.TempDir(), "elsewhere")
	if err := os.Symlink(target, p); err != nil {
		t.Fatal(err)
	}
	r := startLedgerRun(t, cfg, ln, dev)
	if !strings.Contains(r.log.String(), "cannot be opened") || !strings.Contains(r.log.String(), "symbolic link") {
		t.Errorf("a symlinked marker file not refused:\n%s", r.log)
	}
	v, _ := lostPrevote(t, 1)
	if err := r.signVote(v); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(target); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the symlink was followed: %v", err)
	}
	r.stop()
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	r = startLedgerRun(t, cfg, ln, dev)
	v, _ = lostPrevote(t, 2)
	if err := r.signVote(v); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(p)
	if err != nil || fi.Mode().Perm() != 0o600 || fi.Size() != markerSlotSize {
		t.Fatalf("marker file %v, %v: want mode 0600 and one %d-byte slot", fi, err, markerSlotSize)
	}
	b, _ := os.ReadFile(p)
	if mk, ok := decodeMarker(b); !ok || mk.m.ChainID != chainID || mk.m.Height != 2 || mk.m.Phase != signbytes.Prevote || mk.state != markerInFlight {
		t.Errorf("slot %+v, %v: want the last prevote's marker", mk, ok)
	}
	r.stop()
}

// BenchmarkInflightMarker is what the marker adds to a sign that returns
// a signature: the marker made (the sign bytes copied, a CRC-32C) and one
// pwrite (file), or made alone (memory, Options.StateFS).
func BenchmarkInflightMarker(b *testing.B) {
	msg, err := signbytes.Message{Format: signbytes.TM2, Phase: signbytes.Prevote, ChainID: chainID, Height: 5, BlockID: block(5, 1), Timestamp: baseTime}.Bytes()
	if err != nil {
		b.Fatal(err)
	}
	for _, store := range []string{"file", "memory"} {
		b.Run("store="+store, func(b *testing.B) {
			d := &Daemon{cfg: &Config{StateDir: b.TempDir(), Chains: []ChainConfig{{ID: chainID}}}, log: slog.New(slog.DiscardHandler), m: newMetrics("bench")}
			d.openInflight(context.Background(), store == "memory")
			defer d.inflight.close()
			for b.Loop() {
				d.inflight.end(d.inflight.begin(chainID, msg), nil)
			}
		})
	}
}

// TestNoMarkerWithoutDeviceState: an in-process key keeps no double-sign
// state of its own, so its signs leave no in-flight marker: after heights
// signed (precommits with extensions included), every chain's slot in the
// marker file decodes to nothing.
func TestNoMarkerWithoutDeviceState(t *testing.T) {
	f := newFixture(t, ProtocolCometBFT038, privval.V038)
	for h := int64(1); h <= 3; h++ {
		f.signHeight(h)
	}
	b, err := os.ReadFile(filepath.Join(f.cfg.StateDir, InflightFile))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	for off := 0; off+markerSlotSize <= len(b); off += markerSlotSize {
		if mk, ok := decodeMarker(b[off : off+markerSlotSize]); ok {
			t.Fatalf("slot at %d holds a marker of %s %d/%d", off, mk.m.Phase, mk.m.Height, mk.m.Round)
		}
	}
}
