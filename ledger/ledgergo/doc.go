// Package ledgergo plugs github.com/zondax/ledger-go, Zondax's Go client
// for Ledger devices, into package ledger as a transport: Dialer opens
// ledger-go's own USB HID device (LedgerDeviceHID), and Wrap adapts any
// ledger-go LedgerDevice. It is a separate package so that programs which
// use package ledger alone do not link ledger-go, which pulls in gRPC and
// protobuf (the generated client of its Zemu emulator transport) and zap
// (through zondax/golem's logger): about a hundred packages.
//
// Like package ledger's HID transport, Dialer needs cgo (hidapi through
// github.com/zondax/hid); built without cgo it returns an error wrapping
// signer.ErrUnsupported. Wrap is pure Go.
//
// Use it to compare with the upstream transport, or where ledger-go's
// device handling is wanted:
//
//	s, err := ledger.Open(ctx, ledger.Config{Dial: ledgergo.Dialer(0)})
//
// # Upstream defects worked around
//
// zondax/ledger-go v1.0.1 (docs/protocols.md A.8):
//   - LedgerDeviceHID.Exchange sleeps 50 ms before every APDU (drainRead).
//     That is what this transport shows; package ledger's HIDTransport does
//     not sleep.
//   - Exchange takes no context and waits for ever, e.g. for the user's
//     confirmation. The transport runs it in a goroutine and returns when
//     ctx ends (see Wrap).
//   - Once its reader goroutine has started, closing a LedgerDeviceHID
//     makes that goroutine spin for the life of the process, so Dialer
//     never closes one (see Dialer).
//   - A refused APDU is an error whose text is the status word's; the
//     transport maps it back to the status word, so callers get the same
//     *ledger.StatusError as from the other transports.
//
// Errors start with "ledgergo: " and wrap signer.ErrDeviceNotFound (at
// dial), ErrDisconnected, ErrClosed, ErrUnsupported or the context's
// error.
package ledgergo
