package ledger_test

import (
	"context"
	"encoding/binary"
	"errors"
	"testing"
	"time"

	ledger_go "github.com/zondax/ledger-go"

	"github.com/signerkit/signerkit/internal/tm2"
	"github.com/signerkit/signerkit/ledger"
	"github.com/signerkit/signerkit/ledger/ledgersim"
	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/signer/signertest"
)

// upstreamSim behaves like ledger-go's LedgerDeviceHID.Exchange (v1.0.1,
// ledger_hid.go:226-262) in front of the simulator: no context (it waits
// for ever), and a status word other than 0x9000 comes back as the data
// with an error whose text is ledger_go.ErrorMessage(sw).
type upstreamSim struct{ tr ledger.Transport }

func (u upstreamSim) Exchange(cmd []byte) ([]byte, error) {
	if len(cmd) < 5 || byte(len(cmd)-5) != cmd[4] {
		return nil, errors.New("APDU[data length] mismatch")
	}
	resp, err := u.tr.Exchange(context.Background(), cmd)
	if err != nil {
		return nil, err
	}
	sw := binary.BigEndian.Uint16(resp[len(resp)-2:])
	if sw != 0x9000 {
		return resp[:len(resp)-2], errors.New(ledger_go.ErrorMessage(sw))
	}
	return resp[:len(resp)-2], nil
}

func (u upstreamSim) Close() error { return u.tr.Close() }

// upstreamDialer wraps a new upstreamSim per dial. WrapLedgerGo leaves the
// device open on Close (the caller owns it), so the test closes them all
// when it ends, which also ends an upstream Exchange still waiting on a
// hung device, as unplugging would.
func upstreamDialer(t *testing.T, dev *ledgersim.Device) ledger.Dialer {
	return func(context.Context) (ledger.Transport, error) {
		tr, err := dev.Transport()
		if err != nil {
			return nil, err
		}
		t.Cleanup(func() { tr.Close() })
		return ledger.WrapLedgerGo(upstreamSim{tr}), nil
	}
}

// The wrapper around ledger-go's LedgerDevice passes the suite, hung device
// included (its Exchange has no context).
func TestConformanceLedgerGoWrapper(t *testing.T) {
	dev := ledgersim.MustNew(ledgersim.Config{Time: ledgersim.Accounted})
	heights := tm2.NewHeights("", 1)
	open := func() (signer.Signer, error) {
		return ledger.New(context.Background(), upstreamDialer(t, dev), ledger.Config{ChunkSize: 32})
	}
	signertest.Run(t, open, signertest.Options{Message: heights.OfSize, Concurrency: 1, Hang: dev.Hang, Timeout: 10 * time.Second})
}

// Status words survive the trip through ledger-go's error texts.
func TestLedgerGoWrapperStatusWords(t *testing.T) {
	dev := ledgersim.MustNew(ledgersim.Config{Time: ledgersim.Accounted})
	s := openSigner(t, upstreamDialer(t, dev), ledger.Config{})
	msg := tm2.NewHeights("", 1).Next(tm2.KindPrevote)
	mustSign(t, s, msg)
	_, err := s.SignContext(context.Background(), msg)
	var se *ledger.StatusError
	if !errors.As(err, &se) || se.SW != 0x6985 || !errors.Is(err, signer.ErrDoubleSign) {
		t.Errorf("retransmit: %v, want 0x6985", err)
	}
	_, err = s.SignContext(context.Background(), []byte{0x02, 0x08, 0x07})
	if !errors.As(err, &se) || se.SW != 0x6984 || se.ParseError != ledger.ParseUnexpectedType {
		t.Errorf("bad type: %v, want 0x6984 with parse error 4", err)
	}
	dev.SetLocked(true)
	_, err = s.SignContext(context.Background(), tm2.NewHeights("", 9).Next(tm2.KindPrevote))
	if !errors.Is(err, signer.ErrDeviceLocked) {
		t.Errorf("locked: %v", err)
	}
}
