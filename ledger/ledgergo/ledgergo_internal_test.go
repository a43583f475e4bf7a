package ledgergo

import (
	"bytes"
	"errors"
	"testing"

	ledger_go "github.com/zondax/ledger-go"

	"github.com/signerkit/signerkit/signer"
)

// Every status word ledger-go turns into an error text comes back as
// itself, and other failures as ErrDisconnected.
func TestStatusWordFromLedgerGo(t *testing.T) {
	for _, sw := range append(knownWords, 0x5515, 0x6511, 0x9001) {
		got, ok := statusWordOf(ledger_go.ErrorMessage(sw))
		if !ok || got != sw {
			t.Errorf("0x%04X: got 0x%04X, %v", sw, got, ok)
		}
		resp, err := upstreamResponse([]byte{7}, errors.New(ledger_go.ErrorMessage(sw)))
		if err != nil || !bytes.Equal(resp, []byte{7, byte(sw >> 8), byte(sw)}) {
			t.Errorf("0x%04X: response %x, %v", sw, resp, err)
		}
	}
	if _, err := upstreamResponse(nil, errors.New("hidapi: failed to open device")); !errors.Is(err, signer.ErrDisconnected) {
		t.Errorf("transport failure: %v", err)
	}
	resp, err := upstreamResponse([]byte{1, 2}, nil)
	if err != nil || !bytes.Equal(resp, []byte{1, 2, 0x90, 0x00}) {
		t.Errorf("success: %x, %v", resp, err)
	}
}
