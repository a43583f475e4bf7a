package ledger

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"

	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/signer/signertrace"
)

// HID framing of APDUs (docs/protocols.md A.8): 64-byte reports, each starting
// with the channel (0x0101), the tag 0x05 and a sequence number; the first
// also carries the APDU's length.
const (
	ReportSize = 64
	Channel    = 0x0101
	tagAPDU    = 0x05
	firstData  = ReportSize - 7
	nextData   = ReportSize - 5
	// maxResponse is the longest APDU response: 258 data bytes and the
	// status word (docs/protocols.md A.2).
	maxResponse = 260
)

// HIDDevice is a device that moves 64-byte HID reports: the real Ledger
// through github.com/zondax/hid (cgo builds), or the simulator's HID face.
type HIDDevice interface {
	// WriteReport writes one report. ctx carries the caller's deadline and
	// signertrace.Trace, so a simulated device can report its modeled time.
	WriteReport(ctx context.Context, report []byte) error
	// ReadReport reads one report into b and returns its length. It waits
	// until a report arrives, the device fails or closes, or ctx ends; a
	// report that has already arrived is returned even if ctx is done, so
	// a done ctx polls.
	ReadReport(ctx context.Context, b []byte) (int, error)
	// Close releases the device; a ReadReport in flight returns.
	Close() error
}

// appendReports appends the reports that carry apdu on channel.
func appendReports(dst []byte, channel uint16, apdu []byte) []byte {
	for seq := 0; seq == 0 || len(apdu) > 0; seq++ {
		var r [ReportSize]byte
		binary.BigEndian.PutUint16(r[0:], channel)
		r[2] = tagAPDU
		binary.BigEndian.PutUint16(r[3:], uint16(seq))
		n := 5
		if seq == 0 {
			binary.BigEndian.PutUint16(r[5:], uint16(len(apdu)))
			n = 7
		}
		k := copy(r[n:], apdu)
		apdu = apdu[k:]
		dst = append(dst, r[:]...)
	}
	return dst
}

// reportCount returns the number of reports that carry n bytes.
func reportCount(n int) int {
	if n <= firstData {
		return 1
	}
	return 1 + (n-firstData+nextData-1)/nextData
}

// deframer reassembles a response from reports. Reports that do not fit —
// another channel, another tag, an unexpected sequence number, too short
// — are refused with an error and leave it unchanged, so the caller can
// discard them and keep reading.
type deframer struct {
	channel uint16
	want    int // total length, once the first report arrived; -1 before
	seq     uint16
	buf     []byte
}

func newDeframer(channel uint16) *deframer { return &deframer{channel: channel, want: -1} }

var (
	errShortReport   = errors.New("report too short")
	errWrongChannel  = errors.New("wrong channel")
	errWrongTag      = errors.New("wrong tag")
	errWrongSequence = errors.New("wrong sequence number")
	errBadLength     = errors.New("impossible length")
)

// add feeds one report; done says the response is complete.
func (d *deframer) add(r []byte) (done bool, err error) {
	if len(r) < 5 {
		return false, fmt.Errorf("%w: %d bytes", errShortReport, len(r))
	}
	if ch := binary.BigEndian.Uint16(r); ch != d.channel {
		return false, fmt.Errorf("%w 0x%04X", errWrongChannel, ch)
	}
	if r[2] != tagAPDU {
		return false, fmt.Errorf("%w 0x%02X", errWrongTag, r[2])
	}
	seq := binary.BigEndian.Uint16(r[3:])
	if d.want < 0 {
		if seq != 0 {
			return false, fmt.Errorf("%w %d before the first report", errWrongSequence, seq)
		}
		if len(r) < 7 {
			return false, fmt.Errorf("%w: first report of %d bytes", errShortReport, len(r))
		}
		want := int(binary.BigEndian.Uint16(r[5:]))
		if want > maxResponse {
			return false, fmt.Errorf("%w: response length %d", errBadLength, want)
		}
		d.want = want
		d.buf = make([]byte, 0, d.want)
		d.seq = 0
		d.buf = append(d.buf, r[7:min(len(r), 7+d.want)]...)
		return len(d.buf) == d.want, nil
	}
	if seq != d.seq+1 {
		return false, fmt.Errorf("%w %d, want %d", errWrongSequence, seq, d.seq+1)
	}
	d.seq = seq
	d.buf = append(d.buf, r[5:min(len(r), 5+d.want-len(d.buf))]...)
	return len(d.buf) == d.want, nil
}

// polling is a done context: ReadReport with it returns a report only if
// one has already arrived.
var polling = func() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}()

// HIDTransport frames APDUs into 64-byte reports over an HIDDevice, with
// no fixed sleep: before each exchange it drains reports left from an
// earlier one without waiting, and while it waits for the reply it
// discards reports that do not fit. It is safe for concurrent use; one
// exchange runs at a time.
type HIDTransport struct {
	dev     HIDDevice
	channel uint16

	mu     sync.Mutex // one exchange at a time; guards buf and report
	buf    []byte
	report [ReportSize]byte
	closed chan struct{}
	once   sync.Once
	cerr   error
}

var _ Transport = (*HIDTransport)(nil)

// NewHIDTransport returns a transport over dev on channel 0x0101.
func NewHIDTransport(dev HIDDevice) *HIDTransport {
	return &HIDTransport{dev: dev, channel: Channel, closed: make(chan struct{})}
}

// Exchange sends apdu and returns the response (data and status word).
func (t *HIDTransport) Exchange(ctx context.Context, apdu []byte) ([]byte, error) {
	if len(apdu) < 5 || len(apdu) > 5+maxAPDUData {
		return nil, fmt.Errorf("ledger: %d-byte APDU: %w", len(apdu), signer.ErrInvalidArgument)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	select {
	case <-t.closed:
		return nil, fmt.Errorf("ledger: hid: %w", signer.ErrClosed)
	default:
	}
	trace := signertrace.ContextTrace(ctx)
	report := t.report[:]
	// Drain what is already there: replies to an exchange that timed out.
	for {
		n, err := t.dev.ReadReport(polling, report)
		if err != nil {
			if isCtxErr(err) {
				break
			}
			return nil, t.deviceErr("draining", err)
		}
		trace.Add(signertrace.CountHIDReports, 1)
		trace.Add(signertrace.CountBytesIn, int64(n))
	}
	t.buf = appendReports(t.buf[:0], t.channel, apdu)
	for off := 0; off < len(t.buf); off += ReportSize {
		if err := t.dev.WriteReport(ctx, t.buf[off:off+ReportSize]); err != nil {
			if isCtxErr(err) {
				if ctx.Err() != nil {
					return nil, ctxError(ctx, "hid write", 0, nil)
				}
				// A device that models time (ledgersim in accounted mode)
				// ends the exchange at the caller's deadline before the
				// wall clock reaches it: a timeout, not a disconnect.
				return nil, fmt.Errorf("ledger: hid write: %w", err)
			}
			return nil, t.deviceErr("write", err)
		}
		trace.Add(signertrace.CountHIDReports, 1)
		trace.Add(signertrace.CountBytesOut, ReportSize)
	}
	d := newDeframer(t.channel)
	discarded := 0
	var last error
	for {
		n, err := t.dev.ReadReport(ctx, report)
		if err != nil {
			if isCtxErr(err) {
				if ctx.Err() != nil {
					return nil, ctxError(ctx, "hid read", discarded, last)
				}
				return nil, fmt.Errorf("ledger: hid read: %w", err)
			}
			return nil, t.deviceErr("read", err)
		}
		trace.Add(signertrace.CountHIDReports, 1)
		trace.Add(signertrace.CountBytesIn, int64(n))
		ok, err := d.add(report[:n])
		if err != nil {
			discarded++
			last = err
			continue
		}
		if ok {
			return d.buf, nil
		}
	}
}

// deviceErr turns a device failure into ErrClosed after Close, and
// ErrDisconnected otherwise.
func (t *HIDTransport) deviceErr(op string, err error) error {
	select {
	case <-t.closed:
		return fmt.Errorf("ledger: hid %s: %w", op, signer.ErrClosed)
	default:
	}
	if errors.Is(err, signer.ErrDisconnected) {
		return fmt.Errorf("ledger: hid %s: %w", op, err)
	}
	return fmt.Errorf("ledger: hid %s: %w: %w", op, signer.ErrDisconnected, err)
}

// Close closes the device; an exchange in flight returns ErrClosed.
func (t *HIDTransport) Close() error {
	t.once.Do(func() {
		close(t.closed)
		t.cerr = t.dev.Close()
	})
	return t.cerr
}
