package yubihsmsim

import (
	"context"
	"encoding/binary"
	"io"
)

// Fault is a failure the simulator can be told to show.
type Fault uint8

// The faults. Connector down and back is Server.Down and Server.Up;
// expired sessions are ExpireSessions, or a Config.Clock moved past
// IdleTimeout; a full device is 16 sessions opened by other clients.
const (
	// FaultUnplugged takes the device away: the connector answers API
	// requests with HTTP 500 and its status with status=NO_DEVICE, and the
	// device's sessions are lost.
	FaultUnplugged Fault = iota + 1
	// FaultHang makes the device stop answering: requests wait until the
	// fault is cleared or they are abandoned.
	FaultHang
	// FaultCorruptMAC damages the R-MAC of a session response on the way
	// back, after the device has executed the command.
	FaultCorruptMAC
	// FaultGarble replaces a response by random bytes of the same length.
	FaultGarble
	// FaultWrongLength makes a response's length field one more than its
	// payload.
	FaultWrongLength
	// FaultSmallOrderKey makes Get Public Key of an Ed25519 key answer the
	// identity point (01 00…00), a key of small order under which one
	// constant signature verifies for every message, as a malicious or
	// broken device might. Its count is of such answers.
	FaultSmallOrderKey
)

// identityPoint is the encoding of the Ed25519 identity point.
var identityPoint = append([]byte{1}, make([]byte, 31)...)

// Inject turns fault f on for the next n responses (for FaultUnplugged,
// requests), or until Clear when n ≤ 0. FaultHang ignores n.
func (d *Device) Inject(f Fault, n int) {
	if f == FaultUnplugged {
		// The device loses power: its sessions are gone when it is back.
		d.mu.Lock()
		for i := range d.sessions {
			d.dropSession(i)
		}
		// It powers up again with a boot line in its log (Concepts/Logs:
		// power-on events are logged), or a count of unlogged boots when
		// force audit finds the store full.
		d.bootLine()
		d.mu.Unlock()
	}
	d.fmu.Lock()
	defer d.fmu.Unlock()
	if n <= 0 {
		n = -1
	}
	d.faults[f] = n
	if f == FaultHang && d.hangEnd == nil {
		d.hangEnd = make(chan struct{})
	}
}

// Clear turns fault f off.
func (d *Device) Clear(f Fault) {
	d.fmu.Lock()
	defer d.fmu.Unlock()
	delete(d.faults, f)
	if f == FaultHang && d.hangEnd != nil {
		close(d.hangEnd)
		d.hangEnd = nil
	}
}

// Hang makes the device stop answering until release is called, in the
// form signertest.Options.Hang takes.
func (d *Device) Hang() (release func()) {
	d.Inject(FaultHang, 0)
	return func() { d.Clear(FaultHang) }
}

// take reports whether fault f is on, using up one of its count.
func (d *Device) take(f Fault) bool {
	d.fmu.Lock()
	defer d.fmu.Unlock()
	n, ok := d.faults[f]
	if !ok {
		return false
	}
	if n > 0 {
		if n == 1 {
			delete(d.faults, f)
		} else {
			d.faults[f] = n - 1
		}
	}
	return true
}

func (d *Device) waitHang(ctx context.Context) error {
	d.fmu.Lock()
	end := d.hangEnd
	d.fmu.Unlock()
	if end == nil {
		return nil
	}
	d.mu.Lock()
	d.stats.Hung++
	d.mu.Unlock()
	select {
	case <-end:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (d *Device) corrupt(resp []byte, isSession bool) []byte {
	if isSession && d.take(FaultCorruptMAC) {
		resp[len(resp)-1] ^= 0x01
	}
	if d.take(FaultGarble) {
		io.ReadFull(d.rand, resp)
	}
	if d.take(FaultWrongLength) {
		binary.BigEndian.PutUint16(resp[1:3], binary.BigEndian.Uint16(resp[1:3])+1)
	}
	return resp
}
