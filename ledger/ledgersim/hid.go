package ledgersim

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"

	"github.com/signerkit/signerkit/internal/simtime"
	"github.com/signerkit/signerkit/ledger"
	"github.com/signerkit/signerkit/signer"
)

// HIDPort is the device's HID face: one open handle that moves 64-byte
// reports, framed as BOLOS does (ledger-secure-sdk ledger_protocol.c,
// docs/protocols.md A.8): the device reassembles an APDU from reports tagged
// 0x05 with consecutive sequence numbers, ignores other tags, starts over
// on a sequence it did not expect, and answers on the request's channel.
// It implements ledger.HIDDevice, so ledger.HIDTransport runs against it.
//
// Modeled time (1 ms per report each way, the sign, the confirmation) is
// spent when the last report of an APDU is written, on the trace of the
// ctx passed to WriteReport — the caller's — and slept there in realtime
// mode; the reply is queued once that time has passed.
type HIDPort struct {
	d      *Device
	gone   chan struct{}
	in     chan []byte // reports to the host
	closed chan struct{}
	once   sync.Once

	// Device-side reassembly; guarded by d.mu.
	channel uint16
	want    int // -1: waiting for a first report
	seq     uint16
	req     []byte
}

var _ ledger.HIDDevice = (*HIDPort)(nil)

// OpenHID opens a handle on the device's HID face, as opening its hidraw
// path would. It fails with signer.ErrDeviceNotFound while the device is
// unplugged.
func (d *Device) OpenHID() (*HIDPort, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.plugged {
		return nil, fmt.Errorf("ledgersim: unplugged: %w", signer.ErrDeviceNotFound)
	}
	p := &HIDPort{d: d, gone: d.gone, in: make(chan []byte, 256), closed: make(chan struct{}), want: -1}
	d.ports[p] = struct{}{}
	return p, nil
}

// HIDDialer returns a ledger.Dialer that opens the HID face and runs
// ledger.HIDTransport over it.
func (d *Device) HIDDialer() ledger.Dialer {
	return func(ctx context.Context) (ledger.Transport, error) {
		p, err := d.OpenHID()
		if err != nil {
			return nil, err
		}
		return ledger.NewHIDTransport(p), nil
	}
}

// WriteReport takes one report from the host.
func (p *HIDPort) WriteReport(ctx context.Context, r []byte) error {
	d := p.d
	d.mu.Lock()
	select {
	case <-p.closed:
		d.mu.Unlock()
		return fmt.Errorf("ledgersim: hid: %w", signer.ErrClosed)
	case <-p.gone:
		d.mu.Unlock()
		return fmt.Errorf("ledgersim: hid: unplugged: %w", signer.ErrDisconnected)
	default:
	}
	apdu := p.reassembleLocked(r)
	if apdu == nil {
		d.mu.Unlock()
		return nil
	}
	resp, c, f, ok := d.receiveLocked(apdu)
	if !ok {
		d.mu.Unlock()
		return nil // lost, or unplugged: the host finds out when it reads
	}
	channel := p.channel
	d.mu.Unlock()

	err := d.spend(ctx, p.closed, len(apdu), len(resp), c)
	d.mu.Lock()
	p.queueLocked(resp, channel, f)
	d.mu.Unlock()
	if err != nil && (d.mode == simtime.Realtime || errors.Is(err, context.DeadlineExceeded)) {
		// The host gave up while the device worked (or, accounted, its
		// deadline fell within the modeled time); the reply is now stale.
		return err
	}
	return nil
}

// reassembleLocked adds one report to the APDU being received and returns
// the APDU once complete.
func (p *HIDPort) reassembleLocked(r []byte) []byte {
	if len(r) < 5 || r[2] != 0x05 {
		return nil // not an APDU report (ping, MTU, echo…): ignored here
	}
	ch, seq := binary.BigEndian.Uint16(r), binary.BigEndian.Uint16(r[3:])
	switch {
	case seq == 0:
		if len(r) < 7 {
			p.want = -1
			return nil
		}
		p.channel, p.seq = ch, 0
		p.want = int(binary.BigEndian.Uint16(r[5:]))
		p.req = append(p.req[:0], r[7:min(len(r), 7+p.want)]...)
	case p.want >= 0 && seq == p.seq+1 && ch == p.channel:
		p.seq = seq
		p.req = append(p.req, r[5:min(len(r), 5+p.want-len(p.req))]...)
	default:
		p.want = -1 // out of order: start over
		return nil
	}
	if len(p.req) < p.want {
		return nil
	}
	p.want = -1
	return append([]byte(nil), p.req...)
}

// queueLocked frames resp on channel into the host's queue, its reports
// corrupted as fault f says (0: not at all). The caller holds d.mu.
func (p *HIDPort) queueLocked(resp []byte, channel uint16, f Fault) {
	if resp == nil {
		return
	}
	if f == FaultWrongChannel {
		channel = 0x0202
	}
	for seq := 0; seq == 0 || len(resp) > 0; seq++ {
		r := make([]byte, ledger.ReportSize)
		binary.BigEndian.PutUint16(r, channel)
		r[2] = 0x05
		s := seq
		if f == FaultWrongSequence {
			s++
		}
		binary.BigEndian.PutUint16(r[3:], uint16(s))
		off := 5
		if seq == 0 {
			binary.BigEndian.PutUint16(r[5:], uint16(len(resp)))
			off = 7
		}
		resp = resp[copy(r[off:], resp):]
		switch f {
		case FaultGarbled:
			for i := range r {
				r[i] ^= 0x5A
			}
		case FaultShort:
			r = r[:4]
		}
		select {
		case p.in <- r:
		default: // the host stopped reading: the report is lost, as on USB
		}
	}
}

// ReadReport returns the next report for the host.
func (p *HIDPort) ReadReport(ctx context.Context, b []byte) (int, error) {
	select {
	case r := <-p.in:
		return copy(b, r), nil
	default:
	}
	select {
	case r := <-p.in:
		return copy(b, r), nil
	case <-p.closed:
		return 0, fmt.Errorf("ledgersim: hid: %w", signer.ErrClosed)
	case <-p.gone:
		return 0, fmt.Errorf("ledgersim: hid: unplugged: %w", signer.ErrDisconnected)
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}

// Close closes the handle; a ReadReport in flight returns.
func (p *HIDPort) Close() error {
	p.once.Do(func() {
		close(p.closed)
		p.d.mu.Lock()
		delete(p.d.ports, p)
		p.d.mu.Unlock()
	})
	return nil
}
