package openpgpcard

import (
	"context"
)

// Transport carries command APDUs to a card and returns its responses: the
// seam where PC/SC (PCSCDialer), the simulator (cardsim) and any other
// reader plug in.
type Transport interface {
	// Exchange sends one command APDU and returns the response APDU, data
	// followed by the two status-word bytes. A status word other than
	// 0x9000 is not an error here. Errors wrap signer.ErrDisconnected (the
	// card or reader went away), signer.ErrClosed, signer.ErrProtocol or
	// ctx's error.
	Exchange(ctx context.Context, apdu []byte) ([]byte, error)
	// Close releases the card. Close is idempotent.
	Close() error
}

// Dialer connects to a card. The Signer calls it at open and again after
// its transport failed, so a card that comes back is used again.
type Dialer func(ctx context.Context) (Transport, error)
