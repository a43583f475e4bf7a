package ledger

import (
	"context"
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/zondax/hid"
	ledger_go "github.com/zondax/ledger-go"

	"github.com/signerkit/signerkit/signer"
)

// LedgerGoDialer returns a Dialer for zondax/ledger-go's own
// LedgerDeviceHID (v1.0.1), the index-th Ledger it finds, wrapped in the
// Transport seam: for users who want the upstream transport, and to
// measure its stall on a real device. It needs cgo; otherwise the Dialer
// returns an error wrapping signer.ErrUnsupported.
//
// Upstream defects and how the wrapper copes (protocols.md A.8):
//   - Exchange sleeps 50 ms before every APDU (drainRead). That is what
//     this transport exists to show; HIDTransport does not.
//   - Exchange takes no context and waits for ever, e.g. for the user's
//     confirmation. The wrapper runs it in a goroutine and returns when ctx
//     ends; the goroutine finishes when the device answers, and the next
//     exchange on that device waits (within its own ctx) until it has.
//   - Once its reader goroutine has started, closing a LedgerDeviceHID
//     makes that goroutine spin on read errors for the life of the
//     process. The wrapper therefore never closes an upstream device: it
//     keeps each one open, per index, and hands it to the next Dialer call.
//   - A refused APDU comes back as an error whose text is the status
//     word's; the wrapper maps the text back to the status word, so
//     callers get the same *StatusError as from the other transports.
func LedgerGoDialer(index int) Dialer {
	return func(ctx context.Context) (Transport, error) {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("ledger: %w", err)
		}
		if !hid.Supported() {
			return nil, fmt.Errorf("ledger: ledger-go: USB HID needs a cgo build (CGO_ENABLED=1): %w", signer.ErrUnsupported)
		}
		up, err := upstreamDevice(index)
		if err != nil {
			return nil, err
		}
		return &ledgerGoTransport{up: up, closed: make(chan struct{})}, nil
	}
}

// WrapLedgerGo wraps any ledger-go LedgerDevice (LedgerDeviceHID, or the
// mock and Zemu devices of its ledger_mock and ledger_zemu build tags) in
// the Transport seam, with the same handling as LedgerGoDialer: ctx is
// honoured by running Exchange in a goroutine, one exchange reaches dev at
// a time, and status-word error texts become status words again. Close
// does not close dev: the caller owns it.
func WrapLedgerGo(dev ledger_go.LedgerDevice) Transport {
	return &ledgerGoTransport{up: &upstream{dev: dev, busy: make(chan struct{}, 1)}, closed: make(chan struct{})}
}

// upstream is an open LedgerDeviceHID and the semaphore its one exchange
// at a time holds (released by the exchange's goroutine, when the device
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
		return nil, fmt.Errorf("ledger: ledger-go: %w: %v", signer.ErrDeviceNotFound, err)
	}
	up := &upstream{dev: dev, busy: make(chan struct{}, 1)}
	upstreams.m[index] = up
	return up, nil
}

type ledgerGoTransport struct {
	up     *upstream
	closed chan struct{}
	once   sync.Once
}

type result struct {
	data []byte
	err  error
}

func (t *ledgerGoTransport) Exchange(ctx context.Context, apdu []byte) ([]byte, error) {
	select {
	case t.up.busy <- struct{}{}:
	case <-ctx.Done():
		return nil, ctxError(ctx, "ledger-go: waiting for the previous exchange", 0, nil)
	case <-t.closed:
		return nil, fmt.Errorf("ledger: ledger-go: %w", signer.ErrClosed)
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
		return nil, ctxError(ctx, "ledger-go exchange", 0, nil)
	case <-t.closed:
		return nil, fmt.Errorf("ledger: ledger-go: %w", signer.ErrClosed)
	}
}

// upstreamResponse rebuilds data || SW from what LedgerDeviceHID.Exchange
// returned.
func upstreamResponse(data []byte, err error) ([]byte, error) {
	if err == nil {
		return append(append([]byte(nil), data...), 0x90, 0x00), nil
	}
	sw, ok := statusWordOf(err.Error())
	if !ok {
		return nil, fmt.Errorf("ledger: ledger-go: %w: %v", signer.ErrDisconnected, err)
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
// LedgerGoDialer).
func (t *ledgerGoTransport) Close() error {
	t.once.Do(func() { close(t.closed) })
	return nil
}
