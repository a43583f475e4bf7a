package ledgersim_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/signerkit/signerkit/ledger"
	"github.com/signerkit/signerkit/ledger/ledgersim"
	"github.com/signerkit/signerkit/signbytes"
	"github.com/signerkit/signerkit/signbytes/signbytestest"
	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/signer/signertrace"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// open opens a Signer through dial; it is closed when the test ends.
func open(t *testing.T, dial ledger.Dialer, cfg ledger.Config) *ledger.Signer {
	t.Helper()
	cfg.Dial = dial
	s, err := ledger.Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func sign(s *ledger.Signer, msg []byte) ([]byte, error) {
	sig, err := s.SignContext(context.Background(), msg)
	if err == nil && !ed25519.Verify(s.Public().(ed25519.PublicKey), msg, sig) {
		return nil, errors.New("signature does not verify")
	}
	return sig, err
}

func wantSW(t *testing.T, what string, err error, sw uint16, sentinel error) {
	t.Helper()
	var se *ledger.StatusError
	if !errors.As(err, &se) || se.SW != sw || !errors.Is(err, sentinel) {
		t.Errorf("%s: got %v, want status 0x%04X wrapping %v", what, err, sw, sentinel)
	}
}

func vote(phase signbytes.Phase, h, r int64) []byte {
	return signbytestest.Bytes(signbytes.Message{Phase: phase, Height: h, Round: r, BlockID: signbytestest.SampleBlockID(), Timestamp: signbytestest.SampleTime, ChainID: "test11"})
}

func proposal(h, r int64) []byte {
	return signbytestest.Bytes(signbytes.Message{Phase: signbytes.Proposal, Height: h, Round: r, POLRound: -1, BlockID: signbytestest.SampleBlockID(), Timestamp: signbytestest.SampleTime, ChainID: "test11"})
}

// The double-sign rules of docs/protocols.md A.6, through the client.
func TestDoubleSignStateMachine(t *testing.T) {
	d := ledgersim.MustNew(ledgersim.Config{Time: ledgersim.Accounted})
	s := open(t, d.Dialer(), ledger.Config{ChunkSize: 32})
	steps := []struct {
		name string
		msg  []byte
		ok   bool
	}{
		{"first sign (confirmed, no check)", proposal(5, 0), true},
		{"prevote after proposal", vote(signbytes.Prevote, 5, 0), true},
		{"precommit after prevote", vote(signbytes.Precommit, 5, 0), true},
		{"byte-identical retransmit", vote(signbytes.Precommit, 5, 0), false},
		{"prevote after precommit", vote(signbytes.Prevote, 5, 0), false},
		{"proposal at the same round", proposal(5, 0), false},
		{"lower height", vote(signbytes.Prevote, 4, 3), false},
		{"next round prevote", vote(signbytes.Prevote, 5, 1), true},
		{"proposal at the same round after a prevote", proposal(5, 1), false},
		{"precommit after prevote, round 1", vote(signbytes.Precommit, 5, 1), true},
		{"higher height, lower round", vote(signbytes.Prevote, 6, 0), true},
		{"prevote after prevote", vote(signbytes.Prevote, 6, 0), false},
		{"proposal at a higher height", proposal(7, 0), true},
		{"precommit after proposal", vote(signbytes.Precommit, 7, 0), true},
		{"proposal after precommit", proposal(7, 0), false},
		{"next round proposal", proposal(7, 1), true},
		{"lower round precommit", vote(signbytes.Precommit, 7, 0), false},
	}
	for _, st := range steps {
		_, err := sign(s, st.msg)
		if st.ok && err != nil {
			t.Errorf("%s: %v", st.name, err)
		}
		if !st.ok {
			wantSW(t, st.name, err, 0x6985, signer.ErrDoubleSign)
		}
	}
	// Parse errors and refusals leave the state as it was.
	_, err := sign(s, []byte{0x02, 0x08, 0x03})
	var se *ledger.StatusError
	if !errors.As(err, &se) || se.SW != 0x6984 || se.ParseError != ledger.ParseUnexpectedType || !errors.Is(err, signer.ErrInvalidMessage) {
		t.Errorf("bad type: got %v, want 0x6984 with parse error 4", err)
	}
	if _, err := sign(s, vote(signbytes.Precommit, 7, 1)); err != nil {
		t.Errorf("precommit after the refusals: %v", err)
	}
	if st := d.Stats(); st.Confirmations != 1 || st.Signatures != 10 {
		t.Errorf("stats %+v: want 1 confirmation and 10 signatures", st)
	}
}

func TestFirstSignConfirmation(t *testing.T) {
	d := ledgersim.MustNew(ledgersim.Config{Time: ledgersim.Accounted, Confirm: ledgersim.Reject, ConfirmDelay: 4 * time.Second})
	s := open(t, d.Dialer(), ledger.Config{})
	var col signertrace.Collector
	_, err := s.SignContext(col.WithContext(context.Background()), vote(signbytes.Prevote, 1, 0))
	wantSW(t, "rejected", err, 0x6986, signer.ErrRejected)
	if got := col.Summary().Stage(signertrace.StageConfirm).Modeled; got != 4*time.Second {
		t.Errorf("confirm stage %v, want 4s modeled", got)
	}
	d.SetConfirm(ledgersim.Accept, 0)
	if _, err := sign(s, vote(signbytes.Prevote, 1, 0)); err != nil {
		t.Fatalf("accepted after a rejection: %v", err)
	}
	// An app restart loses the state: it asks again, and skips the check.
	d.OpenApp()
	if _, err := sign(s, vote(signbytes.Prevote, 1, 0)); err != nil {
		t.Fatalf("after restart: %v", err)
	}
	if got := d.Stats().Confirmations; got != 3 {
		t.Errorf("%d confirmations, want 3", got)
	}
}

func TestOpenRefusals(t *testing.T) {
	locked := ledgersim.MustNew(ledgersim.Config{})
	locked.SetLocked(true)
	closed := ledgersim.MustNew(ledgersim.Config{})
	closed.CloseApp()
	old := ledgersim.MustNew(ledgersim.Config{Version: ledger.Version{Minor: 4, Patch: 9}})
	unplugged := ledgersim.MustNew(ledgersim.Config{})
	unplugged.Unplug()
	for _, tc := range []struct {
		name string
		d    *ledgersim.Device
		want error
	}{
		{"locked", locked, signer.ErrDeviceLocked},
		{"app closed", closed, signer.ErrAppNotOpen},
		{"version 0.4.9", old, signer.ErrUnsupported},
		{"unplugged", unplugged, signer.ErrDeviceNotFound},
	} {
		for _, dial := range []ledger.Dialer{tc.d.Dialer(), tc.d.HIDDialer()} {
			s, err := ledger.Open(context.Background(), ledger.Config{Dial: dial})
			if !errors.Is(err, tc.want) {
				t.Errorf("%s: got %v, want %v", tc.name, err, tc.want)
			}
			if s != nil {
				s.Close()
			}
		}
	}
	if _, err := ledger.Open(context.Background(), ledger.Config{Dial: locked.Dialer(), ChunkSize: 251}); !errors.Is(err, signer.ErrInvalidArgument) {
		t.Errorf("ChunkSize 251: %v", err)
	}
	// Unlocking and reopening the app make it usable.
	locked.SetLocked(false)
	closed.OpenApp()
	for _, d := range []*ledgersim.Device{locked, closed} {
		s := open(t, d.Dialer(), ledger.Config{})
		if _, err := sign(s, vote(signbytes.Prevote, 1, 0)); err != nil {
			t.Error(err)
		}
	}
	// Locking after open: the sign gets 0x5515.
	s := open(t, locked.Dialer(), ledger.Config{})
	locked.SetLocked(true)
	_, err := sign(s, vote(signbytes.Prevote, 2, 0))
	wantSW(t, "locked mid-session", err, 0x5515, signer.ErrDeviceLocked)
}

func TestVersionAndKey(t *testing.T) {
	seed := bytes.Repeat([]byte{7}, 32)
	d := ledgersim.MustNew(ledgersim.Config{Seed: seed, Version: ledger.Version{Testing: true, Major: 1, Minor: 2, Patch: 3}})
	s := open(t, d.Dialer(), ledger.Config{})
	if got := s.Version(); got != (ledger.Version{Testing: true, Major: 1, Minor: 2, Patch: 3}) {
		t.Errorf("version %v", got)
	}
	want := ed25519.NewKeyFromSeed(seed).Public().(ed25519.PublicKey)
	if !want.Equal(s.Public()) {
		t.Error("public key is not the seed's")
	}
	if _, err := ledgersim.New(ledgersim.Config{Seed: seed[:31]}); !errors.Is(err, signer.ErrInvalidKey) {
		t.Errorf("31-byte seed: %v", err)
	}
}

// Raw APDUs: the app's answers to what the client never sends.
func TestRawAPDUs(t *testing.T) {
	d := ledgersim.MustNew(ledgersim.Config{})
	tr, err := d.Transport()
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	ctx := context.Background()
	msg := vote(signbytes.Prevote, 3, 0)
	for _, tc := range []struct {
		name string
		apdu []byte
		want []byte // suffix
	}{
		{"empty", []byte{}, []byte{0x69, 0x82}},
		{"short", []byte{0x56, 0x00}, []byte{0x67, 0x00}},
		// CLA is checked before the length (app_main.c).
		{"short, wrong CLA", []byte{0xE0, 0x00}, []byte{0x6E, 0x00}},
		{"wrong CLA", []byte{0xE0, 0x00, 0, 0, 0}, []byte{0x6E, 0x00}},
		{"unknown INS", []byte{0x56, 0x07, 0, 0, 0}, []byte{0x6D, 0x00}},
		{"version", []byte{0x56, 0x00, 0, 0, 0}, []byte{0, 0, 9, 1, 0x90, 0x00}},
		// Lc is not checked: the data is everything after the header.
		{"sign with a wrong Lc", append([]byte{0x56, 0x02, 1, 1, 0}, msg...), []byte{0x90, 0x00}},
	} {
		resp, err := tr.Exchange(ctx, tc.apdu)
		if err != nil || !bytes.HasSuffix(resp, tc.want) {
			t.Errorf("%s: %x, %v; want …%x", tc.name, resp, err, tc.want)
		}
	}
}

// The app's zero-size fallback buffer (docs/protocols.md A.5 step 3):
// continuation chunks before the first P1 == 1 since the app started, and
// after an overflow until the next P1 == 1, get 0x6983.
func TestFallbackBuffer(t *testing.T) {
	d := ledgersim.MustNew(ledgersim.Config{Profile: ledgersim.NanoS})
	tr, err := d.Transport()
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	ctx := context.Background()
	chunk := func(p1, p2 byte, data []byte) []byte {
		return append([]byte{ledger.CLA, ledger.INSSignEd25519, p1, p2, byte(len(data))}, data...)
	}
	step := func(what string, apdu []byte, want []byte) {
		t.Helper()
		resp, err := tr.Exchange(ctx, apdu)
		if err != nil || !bytes.HasSuffix(resp, want) {
			t.Errorf("%s: %x, %v; want …%x", what, resp, err, want)
		}
	}
	msg := vote(signbytes.Prevote, 5, 0)
	tooSmall, ok := []byte{0x69, 0x83}, []byte{0x90, 0x00}
	// No P1 == 1 since the app started.
	step("P1 = 2 first", chunk(2, 2, msg), tooSmall)
	step("P1 = 3 first", chunk(3, 4, msg[:10]), tooSmall)
	// An empty chunk appends nothing and is not refused; the buffer
	// stays empty (parse error 1).
	step("empty chunk before P1 = 1", chunk(2, 3, nil), ok)
	step("empty last chunk before P1 = 1", chunk(3, 3, nil), []byte{0x01, 0x69, 0x84})
	// P1 == 1 starts the real buffer.
	step("P1 = 1", chunk(1, 2, msg[:50]), ok)
	step("P1 = 2", chunk(2, 2, msg[50:]), ok)
	// Overflow the 1024-byte buffer, then continue: still 0x6983.
	big := make([]byte, 250)
	step("P1 = 1 of 5", chunk(1, 5, big), ok)
	for p1 := byte(2); p1 <= 4; p1++ {
		step("filling", chunk(p1, 5, big), ok)
	}
	step("overflow", chunk(5, 6, big), tooSmall)
	step("after the overflow", chunk(6, 6, big[:1]), tooSmall)
	step("P1 = 2 after the overflow", chunk(2, 2, msg), tooSmall)
	// Only P1 == 1 recovers.
	step("P1 = 1 after the overflow", chunk(1, 1, vote(signbytes.Prevote, 6, 0)), ok)
	// Restarting the app brings the fallback back.
	d.CloseApp()
	d.OpenApp()
	step("P1 = 2 after a restart", chunk(2, 2, msg), tooSmall)
}

func TestBufferSizes(t *testing.T) {
	for _, p := range []ledgersim.Profile{ledgersim.NanoSPlus, ledgersim.NanoS} {
		d := ledgersim.MustNew(ledgersim.Config{Raw: true, Profile: p})
		s := open(t, d.Dialer(), ledger.Config{ChunkSize: 128, MaxMessage: ledger.NoMessageLimit})
		msg := make([]byte, p.BufferSize+1)
		rand.Read(msg)
		_, err := sign(s, msg)
		wantSW(t, p.Name, err, 0x6983, signer.ErrMessageTooLarge)
		if _, err := sign(s, msg[:p.BufferSize]); err != nil {
			t.Errorf("%s: %d bytes: %v", p.Name, p.BufferSize, err)
		}
		// Raw mode signs the same bytes twice: it is not the validator app.
		if _, err := sign(s, msg[:10]); err != nil {
			t.Error(err)
		}
		if _, err := sign(s, msg[:10]); err != nil {
			t.Errorf("raw mode refused a repeat: %v", err)
		}
	}
	// The validator app refuses what its one-byte prefix cannot carry,
	// unless told otherwise; the client, by default, does not send it.
	long := signbytestest.Message(signbytestest.KindProposal, 1, "test-chain-with-long-id")
	dev := ledgersim.MustNew(ledgersim.Config{})
	before := dev.Stats().APDUs
	_, err := sign(open(t, dev.Dialer(), ledger.Config{}), long)
	var tl *ledger.MessageTooLargeError
	if !errors.As(err, &tl) || tl.Limit != ledger.AppMaxMessage || !errors.Is(err, signer.ErrMessageTooLarge) {
		t.Errorf("146-byte proposal: %v, want a *MessageTooLargeError", err)
	}
	// Open sent GET_VERSION and PUBLIC_KEY; the sign sent nothing.
	if got := dev.Stats().APDUs - before; got != 2 {
		t.Errorf("%d APDUs for an open and a refused sign, want 2", got)
	}
	strict := open(t, ledgersim.MustNew(ledgersim.Config{}).Dialer(), ledger.Config{MaxMessage: ledger.NoMessageLimit})
	_, err = sign(strict, long)
	var se *ledger.StatusError
	if !errors.As(err, &se) || se.ParseError != ledger.ParseUnexpectedBufferSize {
		t.Errorf("146-byte proposal: %v, want parse error 7", err)
	}
	if _, err := sign(open(t, ledgersim.MustNew(ledgersim.Config{LongPrefix: true}).Dialer(), ledger.Config{MaxMessage: ledger.NoMessageLimit}), long); err != nil {
		t.Errorf("146-byte proposal with LongPrefix: %v", err)
	}
}

// The modeled figures of the issue: 108 B at chunk 32 is 4 APDUs, 9 HID
// reports, 9 ms on the wire and 526 ms on the device; through the
// ledger-go model, 200 ms more of stall (≈ 4 × 53 + 526 = 738 ms); at chunk
// 128 one APDU (≈ 579 ms through ledger-go).
func TestModeledFigures(t *testing.T) {
	for _, tc := range []struct {
		chunk    int
		upstream bool
		apdus    int64
		reports  int64
		wire     time.Duration
		stall    time.Duration
	}{
		{32, false, 4, 9, 9 * time.Millisecond, 0},
		{32, true, 4, 9, 9 * time.Millisecond, 200 * time.Millisecond},
		{128, false, 1, 4, 4 * time.Millisecond, 0},
		{128, true, 1, 4, 4 * time.Millisecond, 50 * time.Millisecond},
	} {
		d := ledgersim.MustNew(ledgersim.Config{Time: ledgersim.Accounted})
		dial := d.HIDDialer()
		if tc.upstream {
			dial = d.UpstreamDialer(dial)
		}
		s := open(t, dial, ledger.Config{ChunkSize: tc.chunk})
		h := signbytestest.NewHeights("", 1)
		if _, err := sign(s, h.Next(signbytestest.KindPrevote)); err != nil {
			t.Fatal(err)
		}
		col := signertrace.NewCollector()
		msg := h.Next(signbytestest.KindPrevote)
		sig, err := s.SignContext(col.WithContext(context.Background()), msg)
		if err != nil || !ed25519.Verify(d.PublicKey(), msg, sig) {
			t.Fatalf("sign: %v", err)
		}
		sum := col.Summary()
		if got := sum.Count(signertrace.CountAPDUs); got != tc.apdus {
			t.Errorf("chunk %d: %d APDUs, want %d", tc.chunk, got, tc.apdus)
		}
		if got := sum.Count(signertrace.CountHIDReports); got != tc.reports {
			t.Errorf("chunk %d: %d reports, want %d", tc.chunk, got, tc.reports)
		}
		if got := sum.Stage(signertrace.StageWire).Modeled; got != tc.wire {
			t.Errorf("chunk %d: wire %v, want %v", tc.chunk, got, tc.wire)
		}
		if got := sum.Stage(signertrace.StageStall).Modeled; got != tc.stall {
			t.Errorf("chunk %d: stall %v, want %v", tc.chunk, got, tc.stall)
		}
		if got := sum.Stage(signertrace.StageDevice).Modeled; got != 526*time.Millisecond {
			t.Errorf("chunk %d: device %v", tc.chunk, got)
		}
		t.Logf("chunk %d upstream %v: modeled %v", tc.chunk, tc.upstream, sum.Modeled())
	}
}

// In realtime mode the modeled stages are slept, and say so.
func TestRealtimeSleeps(t *testing.T) {
	p := ledgersim.Profile{Name: "fast test profile", Sign: 5 * time.Millisecond, Report: time.Millisecond, BufferSize: 16384, UpstreamStall: 2 * time.Millisecond}
	d := ledgersim.MustNew(ledgersim.Config{Time: ledgersim.Realtime, Profile: p})
	s := open(t, d.UpstreamDialer(d.HIDDialer()), ledger.Config{})
	var stages []signertrace.StageInfo
	tr := &signertrace.Trace{StageDone: func(i signertrace.StageInfo) { stages = append(stages, i) }}
	msg := vote(signbytes.Prevote, 1, 0)
	if _, err := s.SignContext(signertrace.WithTrace(context.Background(), tr), msg); err != nil {
		t.Fatal(err)
	}
	seen := map[signertrace.Stage]bool{}
	for _, i := range stages {
		if i.Source == signertrace.Modeled {
			seen[i.Stage] = true
			if !i.Slept {
				t.Errorf("%v not slept in realtime mode", i.Stage)
			}
		}
	}
	for _, st := range []signertrace.Stage{signertrace.StageStall, signertrace.StageWire, signertrace.StageDevice} {
		if !seen[st] {
			t.Errorf("no modeled %v stage", st)
		}
	}
}

// Speculos serves one client at a time: a new connection replaces the old.
func TestSpeculosOneClient(t *testing.T) {
	d := ledgersim.MustNew(ledgersim.Config{})
	srv, err := d.ServeSpeculos()
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	exchange := func(c net.Conn) ([]byte, error) {
		c.SetDeadline(time.Now().Add(5 * time.Second))
		if _, err := c.Write([]byte{0, 0, 0, 5, 0x56, 0x00, 0, 0, 0}); err != nil {
			return nil, err
		}
		var hdr [4]byte
		if _, err := io.ReadFull(c, hdr[:]); err != nil {
			return nil, err
		}
		resp := make([]byte, binary.BigEndian.Uint32(hdr[:])+2)
		_, err := io.ReadFull(c, resp)
		return resp, err
	}
	first, err := net.Dial("tcp", srv.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	if resp, err := exchange(first); err != nil || !bytes.Equal(resp, []byte{0, 0, 9, 1, 0x90, 0}) {
		t.Fatalf("version: %x, %v", resp, err)
	}
	second, err := net.Dial("tcp", srv.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer second.Close()
	if _, err := exchange(second); err != nil {
		t.Fatalf("second client: %v", err)
	}
	if _, err := exchange(first); err == nil {
		t.Error("the first client still talks to the device")
	}
}
