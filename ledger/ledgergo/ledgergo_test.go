package ledgergo_test

import (
	"context"
	"crypto/ed25519"
	"encoding/binary"
	"errors"
	"os"
	"testing"
	"time"

	ledger_go "github.com/zondax/ledger-go"
	"go.uber.org/goleak"

	"github.com/signerkit/signerkit/ledger"
	"github.com/signerkit/signerkit/ledger/ledgergo"
	"github.com/signerkit/signerkit/ledger/ledgersim"
	"github.com/signerkit/signerkit/signbytes/signbytestest"
	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/signer/signertest"
)

func TestMain(m *testing.M) {
	if os.Getenv("SIGNERKIT_LEDGER") != "" {
		// A real LedgerDeviceHID keeps its reader goroutine for the life
		// of the process (see Dialer): goleak would report it.
		os.Exit(m.Run())
	}
	goleak.VerifyTestMain(m)
}

// upstreamSim behaves like ledger-go's LedgerDeviceHID.Exchange (v1.0.1,
// ledger_hid.go:226-262) in front of the simulator: no context (it waits
// for ever), and a status word other than 0x9000 comes back as the data
// with an error whose text is ledger_go.ErrorMessage(sw).
type upstreamSim struct{ tr ledger.Transport }

var _ ledger_go.LedgerDevice = upstreamSim{}

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

// upstreamDialer wraps a new upstreamSim per dial. Wrap leaves the device
// open on Close (the caller owns it), so the test closes them all when it
// ends, which also ends an upstream Exchange still waiting on a hung
// device, as unplugging would.
func upstreamDialer(t *testing.T, dev *ledgersim.Device) ledger.Dialer {
	return func(context.Context) (ledger.Transport, error) {
		tr, err := dev.Transport()
		if err != nil {
			return nil, err
		}
		t.Cleanup(func() { tr.Close() })
		return ledgergo.Wrap(upstreamSim{tr}), nil
	}
}

// The wrapper around ledger-go's LedgerDevice passes the suite, hung device
// included (its Exchange has no context).
func TestConformanceWrap(t *testing.T) {
	dev := ledgersim.MustNew(ledgersim.Config{Time: ledgersim.Accounted})
	heights := signbytestest.NewHeights("", 1)
	open := func() (signer.Signer, error) {
		return ledger.Open(context.Background(), ledger.Config{Dial: upstreamDialer(t, dev), ChunkSize: 32})
	}
	signertest.Run(t, open, signertest.Options{Message: heights.OfSize, Concurrency: 1, Hang: dev.Hang, Timeout: 10 * time.Second})
}

// Status words survive the trip through ledger-go's error texts.
func TestWrapStatusWords(t *testing.T) {
	dev := ledgersim.MustNew(ledgersim.Config{Time: ledgersim.Accounted})
	s, err := ledger.Open(context.Background(), ledger.Config{Dial: upstreamDialer(t, dev)})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	msg := signbytestest.NewHeights("", 1).Next(signbytestest.KindPrevote)
	sig, err := s.SignContext(context.Background(), msg)
	if err != nil || !ed25519.Verify(dev.PublicKey(), msg, sig) {
		t.Fatalf("sign: %x, %v", sig, err)
	}
	_, err = s.SignContext(context.Background(), msg)
	var se *ledger.StatusError
	if !errors.As(err, &se) || se.SW != 0x6985 || !errors.Is(err, signer.ErrDoubleSign) {
		t.Errorf("retransmit: %v, want 0x6985", err)
	}
	_, err = s.SignContext(context.Background(), []byte{0x02, 0x08, 0x07})
	if !errors.As(err, &se) || se.SW != 0x6984 || se.ParseError != ledger.ParseUnexpectedType {
		t.Errorf("bad type: %v, want 0x6984 with parse error 4", err)
	}
	dev.SetLocked(true)
	_, err = s.SignContext(context.Background(), signbytestest.NewHeights("", 9).Next(signbytestest.KindPrevote))
	if !errors.Is(err, signer.ErrDeviceLocked) {
		t.Errorf("locked: %v", err)
	}
}

// A transport failure that is not a status word comes back as
// ErrDisconnected, with one "ledger: " prefix through the Signer.
func TestWrapDisconnected(t *testing.T) {
	dev := ledgersim.MustNew(ledgersim.Config{Time: ledgersim.Accounted})
	s, err := ledger.Open(context.Background(), ledger.Config{Dial: upstreamDialer(t, dev)})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	dev.Inject(ledgersim.FaultUnplug)
	_, err = s.SignContext(context.Background(), signbytestest.NewHeights("", 1).Next(signbytestest.KindPrevote))
	if !errors.Is(err, signer.ErrDisconnected) {
		t.Fatalf("unplugged: %v, want ErrDisconnected", err)
	}
	const want = "ledger: SIGN_ED25519: ledgergo: "
	if got := err.Error(); len(got) < len(want) || got[:len(want)] != want {
		t.Errorf("error %q does not start with %q", got, want)
	}
}

// TestRealDevice runs the suite through ledger-go's LedgerDeviceHID
// against a real Ledger running the validator app
// (SIGNERKIT_LEDGER=hid or any value). The first sign needs confirming
// on the device.
func TestRealDevice(t *testing.T) {
	if os.Getenv("SIGNERKIT_LEDGER") == "" {
		t.Skip("set SIGNERKIT_LEDGER=hid to run against a real device")
	}
	heights := signbytestest.NewHeights("", time.Now().UnixMilli())
	open := func() (signer.Signer, error) {
		return ledger.Open(context.Background(), ledger.Config{Dial: ledgergo.Dialer(0), ChunkSize: 32})
	}
	signertest.Run(t, open, signertest.Options{Message: heights.OfSize, Concurrency: 1, Timeout: 2 * time.Minute})
}
