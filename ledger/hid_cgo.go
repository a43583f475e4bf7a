//go:build cgo

package ledger

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/zondax/hid"

	"github.com/signerkit/signerkit/signer"
)

// VendorID is Ledger's USB vendor id.
const VendorID = 0x2c97

// usagePage is the HID usage page of the Ledger's APDU interface.
const usagePage = 0xffa0

// HIDDialer returns a Dialer that opens the Ledger at path through
// github.com/zondax/hid, or the first Ledger found when path is empty,
// and frames APDUs with HIDTransport.
func HIDDialer(path string) Dialer {
	return func(ctx context.Context) (Transport, error) {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("ledger: %w", err)
		}
		dev, err := openHID(path)
		if err != nil {
			return nil, err
		}
		return NewHIDTransport(dev), nil
	}
}

// isLedger picks the APDU interface of a Ledger as ledger-go does
// (docs/protocols.md A.8): usage page 0xffa0, or interface 0 of a known
// product (Nano S, X, S Plus, Stax, Flex).
func isLedger(d hid.DeviceInfo) bool {
	if d.VendorID != VendorID {
		return false
	}
	if d.UsagePage == usagePage {
		return true
	}
	switch d.ProductID >> 8 {
	case 0x10, 0x40, 0x50, 0x60, 0x70:
		return d.Interface == 0
	}
	return false
}

func openHID(path string) (HIDDevice, error) {
	if !hid.Supported() {
		return nil, fmt.Errorf("ledger: USB HID is not supported on this platform: %w", signer.ErrUnsupported)
	}
	var found *hid.DeviceInfo
	for _, d := range hid.Enumerate(0, 0) {
		if (path == "" && isLedger(d)) || (path != "" && d.Path == path) {
			found = &d
			break
		}
	}
	if found == nil {
		if path == "" {
			return nil, fmt.Errorf("ledger: no Ledger (vendor id 0x%04x) found; is it plugged in and unlocked, and not held by another program?: %w", VendorID, signer.ErrDeviceNotFound)
		}
		return nil, fmt.Errorf("ledger: no HID device at %q: %w", path, signer.ErrDeviceNotFound)
	}
	dev, err := found.Open()
	if err != nil {
		return nil, fmt.Errorf("ledger: opening %s: %w: %v", found.Path, signer.ErrDeviceNotFound, err)
	}
	return newUSBDevice(dev), nil
}

// usbDevice adapts a *hid.Device, whose Read blocks with no timeout, to
// HIDDevice: one goroutine reads reports into a queue and ends when the
// device is closed (hidapi's hid_close wakes a blocked hid_read).
type usbDevice struct {
	dev     *hid.Device
	reports chan []byte
	failed  chan struct{} // closed when the reader stopped on an error
	err     error         // why, set before failed is closed
	stop    chan struct{}
	done    chan struct{}
	once    sync.Once
}

func newUSBDevice(dev *hid.Device) *usbDevice {
	u := &usbDevice{dev: dev, reports: make(chan []byte, 64), failed: make(chan struct{}),
		stop: make(chan struct{}), done: make(chan struct{})}
	go u.read()
	return u
}

func (u *usbDevice) read() {
	defer close(u.done)
	for {
		buf := make([]byte, ReportSize)
		n, err := u.dev.Read(buf)
		if err != nil {
			u.err = err
			close(u.failed)
			return
		}
		if n == 0 {
			continue // hidapi returns 0 only in non-blocking mode, which zondax/hid never sets
		}
		select {
		case u.reports <- buf[:n]:
		case <-u.stop:
			return
		}
	}
}

func (u *usbDevice) WriteReport(ctx context.Context, report []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	select {
	case <-u.failed:
		return fmt.Errorf("%w: %v", signer.ErrDisconnected, u.err)
	default:
	}
	_, err := u.dev.Write(report)
	if errors.Is(err, hid.ErrDeviceClosed) {
		return signer.ErrClosed
	}
	return err
}

func (u *usbDevice) ReadReport(ctx context.Context, b []byte) (int, error) {
	select {
	case r := <-u.reports:
		return copy(b, r), nil
	default:
	}
	select {
	case r := <-u.reports:
		return copy(b, r), nil
	case <-u.failed:
		return 0, fmt.Errorf("%w: %v", signer.ErrDisconnected, u.err)
	case <-u.stop:
		return 0, signer.ErrClosed
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}

// Close closes the device and waits for the reader goroutine to end.
func (u *usbDevice) Close() error {
	var err error
	u.once.Do(func() {
		close(u.stop)
		err = u.dev.Close()
		<-u.done
	})
	return err
}
