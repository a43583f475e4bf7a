package ledgergo

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/zondax/hid"
	ledger_go "github.com/zondax/ledger-go"

	"github.com/signerkit/signerkit/ledger"
	"github.com/signerkit/signerkit/signer"
)

// Dialer returns a ledger.Dialer for zondax/ledger-go's own
// LedgerDeviceHID (v1.0.1), the index-th Ledger it finds (from 0), wrapped
// as Wrap does. It needs cgo; otherwise the Dialer returns an error
// wrapping signer.ErrUnsupported.
//
// Once its reader goroutine has started, closing a LedgerDeviceHID makes
// that goroutine spin on read errors for the life of the process. So the
// Dialer never closes an upstream device: it keeps each one open, per
// index, for the process, and hands it to the next Dialer call for the
// same index. Closing the Transport it returns releases that Transport
// only.
func Dialer(index int) ledger.Dialer {
	return func(ctx context.Context) (ledger.Transport, error) {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("ledgergo: %w", err)
		}
		if !hid.Supported() {
			return nil, fmt.Errorf("ledgergo: USB HID needs a cgo build (CGO_ENABLED=1): %w", signer.ErrUnsupported)
		}
		up, err := upstreamDevice(index)
		if err != nil {
			return nil, err
		}
		return &transport{up: up, closed: make(chan struct{})}, nil
	}
}

// Wrap returns a ledger.Transport over any ledger-go LedgerDevice
// (LedgerDeviceHID, or the mock and Zemu devices of ledger-go's
// ledger_mock and ledger_zemu build tags):
//
//   - The device's Exchange takes no context and waits for ever, e.g. for
//     the user's confirmation. The transport runs it in a goroutine and
//     returns when ctx ends; the goroutine finishes when the device
//     answers, and the next exchange waits (within its own ctx) until it
//     has, so one exchange reaches dev at a time.
//   - A refused APDU comes back from ledger-go as an error whose text is
//     the status word's (ledger_go.ErrorMessage); the transport maps the
//     text back to the status word, so the ledger.Signer returns the same
//     *ledger.StatusError as over the other transports.
//
// Close does not close dev: the caller owns it.
func Wrap(dev ledger_go.LedgerDevice) ledger.Transport {
	return &transport{up: &upstream{dev: dev, busy: make(chan struct{}, 1)}, closed: make(chan struct{})}
}

// upstream is an open LedgerDevice and the semaphore its one exchange at a
// time holds (released by the exchange's goroutine, when the device
// answered).
type upstream struct {
	dev  ledger_go.LedgerDevice
	busy chan struct{}
}

var upstreams = struct {
	sync.Mutex
	m map[int]*upstream
}{m: map[int]*upstream{}}

func upstreamDevice(index int) (*upstream, error) {
	upstreams.Lock()
	defer upstreams.Unlock()
	if up := upstreams.m[index]; up != nil {
		return up, nil
	}
	dev, err := ledger_go.NewLedgerAdmin().Connect(index)
	if err != nil {
		return nil, fmt.Errorf("ledgergo: Ledger %d: %w: %v", index, signer.ErrDeviceNotFound, err)
	}
	up := &upstream{dev: dev, busy: make(chan struct{}, 1)}
	upstreams.m[index] = up
	return up, nil
}

type transport struct {
	up     *upstream
	closed chan struct{}
	once   sync.Once
}

type result struct {
	data []byte
	err  error
}

func (t *transport) Exchange(ctx context.Context, apdu []byte) ([]byte, error) {
	select {
	case <-t.closed:
		return nil, fmt.Errorf("ledgergo: %w", signer.ErrClosed)
	default:
	}
	select {
	case t.up.busy <- struct{}{}:
	case <-ctx.Done():
		return nil, ctxError(ctx, "waiting for the previous exchange")
	case <-t.closed:
		return nil, fmt.Errorf("ledgergo: %w", signer.ErrClosed)
	}
	done := make(chan result, 1)
	cmd := append([]byte(nil), apdu...)
	go func() {
		data, err := t.up.dev.Exchange(cmd)
		<-t.up.busy
		done <- result{data, err}
	}()
	select {
	case r := <-done:
		return upstreamResponse(r.data, r.err)
	case <-ctx.Done():
		return nil, ctxError(ctx, "exchange")
	case <-t.closed:
		return nil, fmt.Errorf("ledgergo: %w", signer.ErrClosed)
	}
}

func ctxError(ctx context.Context, what string) error {
	err := context.Cause(ctx)
	if err == nil {
		err = ctx.Err()
	}
	if !errors.Is(err, ctx.Err()) {
		return fmt.Errorf("ledgergo: %s: no reply: %w (%w)", what, ctx.Err(), err)
	}
	return fmt.Errorf("ledgergo: %s: no reply: %w", what, err)
}

// upstreamResponse rebuilds data || SW from what LedgerDevice.Exchange
// returned.
func upstreamResponse(data []byte, err error) ([]byte, error) {
	if err == nil {
		return append(append([]byte(nil), data...), 0x90, 0x00), nil
	}
	sw, ok := statusWordOf(err.Error())
	if !ok {
		return nil, fmt.Errorf("ledgergo: %w: %v", signer.ErrDisconnected, err)
	}
	return binary.BigEndian.AppendUint16(append([]byte(nil), data...), sw), nil
}

// knownWords are the status words ledger_go.ErrorMessage has a text for.
var knownWords = []uint16{0x6400, 0x6700, 0x6982, 0x6983, 0x6984, 0x6985, 0x6986, 0x6A80, 0x6B00, 0x6D00, 0x6E00, 0x6E01, 0x6F00, 0x6F01}

const unknownWordPrefix = "APDU Error Code from Ledger Device: 0x"

// statusWordOf maps an upstream error text back to its status word.
func statusWordOf(msg string) (uint16, bool) {
	for _, sw := range knownWords {
		if msg == ledger_go.ErrorMessage(sw) {
			return sw, true
		}
	}
	if hex, ok := strings.CutPrefix(msg, unknownWordPrefix); ok {
		if v, err := strconv.ParseUint(hex, 16, 16); err == nil {
			return uint16(v), true
		}
	}
	return 0, false
}

// Close releases this transport; the upstream device stays open (see
// Dialer and Wrap).
func (t *transport) Close() error {
	t.once.Do(func() { close(t.closed) })
	return nil
}
