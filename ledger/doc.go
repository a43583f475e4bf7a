// Package ledger signs with the Ed25519 key of a Ledger running the
// Tendermint validator app (CLA 0x56; LedgerHQ/app-tendermint v0.9.1 and
// gnoverse/tm-ledger-validator), as a signer.Signer.
//
// Its USB HID transport (HIDDialer, which Open uses by default) needs
// cgo: it drives hidapi through github.com/zondax/hid. The Speculos and
// simulator (ledgersim) transports are pure Go. Built with CGO_ENABLED=0,
// the package compiles and opening a Ledger over HID returns an error
// wrapping signer.ErrUnsupported.
//
// # Opening the app
//
// The app takes sign bytes of at most 128 bytes (AppMaxMessage: its
// parser wants a one-byte length prefix). Longer ones — a proposal at
// round 1 or more on a chain ID of a few characters, for one — are refused
// before anything is sent, with a *MessageTooLargeError that names the
// limit and wraps signer.ErrMessageTooLarge; Config.MaxMessage moves the
// limit for a fork that takes more.
//
// The package follows signer's one shape for every backend. Open(ctx,
// cfg) opens the app through the transport Config.Dial makes (by default
// the HID device at Config.Path, or the first Ledger found) and returns a
// *Signer; OpenStore returns a *Store, the device as a key store of its one
// key (ListKeys and OpenKey only: the app cannot generate, import or
// delete keys). ParseURI reads a ledger: URI, and importing the package
// registers the scheme, so signer.Open opens one:
//
//	ledger:                                   the first Ledger over USB HID
//	ledger:hid=/dev/hidraw3?chunk-size=32     the Ledger at this HID path
//	ledger:speculos=127.0.0.1:9999            Speculos's APDU server
//
// with chunk-size (1–250), min-version (x.y.z) and sign-timeout as
// options; ParseURI lists them. The device
// needs no secret: its owner unlocks it with the PIN on the device.
//
// # The validator app
//
// A Signer speaks the app's three instructions (docs/protocols.md A.3):
// GET_VERSION, checked against Config.MinVersion at open; PUBLIC_KEY_ED25519,
// read at open so Public never does I/O (and returns a copy the caller may
// modify), refused with an error wrapping signer.ErrInvalidKey when it is of
// small order or not canonically encoded (no seed gives such a key, and
// under a small-order one a single constant reply would verify for every
// message); and SIGN_ED25519, with the message
// split into Config.ChunkSize chunks (1–250, default 250), P1 the chunk's
// index from 1 and P2 the number of chunks. The app signs only well-formed
// tm2 sign bytes (a one-byte length prefix, so at most 128 bytes upstream)
// whose height, round and step move forward (docs/protocols.md A.5, A.6). The
// first sign after the app starts waits for the user to confirm it on the
// device, for as long as the caller's context allows; Sign, the
// crypto.Signer method, which has no context, allows Config.SignTimeout
// (DefaultSignTimeout, 30 s, room for that confirmation) and then fails
// with an error wrapping context.DeadlineExceeded, dropping the transport
// and freeing the device's one sign slot. Every signature is verified
// under the public key before it is returned.
//
// # Transports
//
// The client talks through one seam, Transport (Exchange(ctx, apdu) and
// Close), opened by a Dialer:
//
//   - HIDDialer, the default: our HID transport, HIDTransport, which
//     frames APDUs into 64-byte reports (channel 0x0101, tag 0x05,
//     sequence, length; docs/protocols.md A.8) over github.com/zondax/hid,
//     opened by path or as the first device with Ledger's vendor id
//     0x2c97. It never sleeps: before each exchange it drains reports left
//     from an earlier one without waiting, it discards reports whose
//     channel, tag or sequence do not fit, and its reads end when the
//     context does. It needs cgo; a pure-Go build's HIDDialer returns an
//     error wrapping signer.ErrUnsupported.
//   - SpeculosDialer: Speculos's raw APDU TCP server (docs/protocols.md A.10).
//   - any HIDDevice through NewHIDTransport, and ledgersim's faces and its
//     SpeculosDialer (below).
//   - package ledgergo: zondax/ledger-go's own LedgerDeviceHID, for users
//     who want the upstream transport and to measure its stall. It lives
//     in its own package so that this one does not link ledger-go and the
//     gRPC, protobuf and zap packages it imports.
//
// After a transport fails — the device unplugged, a reply that did not
// come before the deadline, a garbled frame — the Signer closes it and
// dials again on the next sign, so a device that comes back is used again.
// A refused status word leaves the transport as it is.
//
// # Errors
//
// Status words become *StatusError{SW, INS, ParseError}, which unwraps to
// signer.ErrRejected (0x6986, the user pressed Reject), ErrDoubleSign
// (0x6985, including a byte-identical retransmit), ErrInvalidMessage
// (0x6984, ParseError holding the app's parse-error code), ErrMessageTooLarge
// (0x6983, the app's 16384-byte buffer, 1024 on a Nano S), ErrAppNotOpen
// (0x6E00: the dashboard or another app), ErrDeviceLocked (0x5515) and
// ErrUnsupported (0x6D00). Transport failures wrap ErrDeviceNotFound (at
// open), ErrDisconnected, ErrProtocol (*FrameError when reports were
// discarded until the deadline), ErrClosed, or the context's error. Every
// error the Signer returns starts with "ledger: " once, followed by the
// instruction or step that failed and the transport's own words.
//
// # Concurrency
//
// A Signer is safe for concurrent use. The device signs one message at a
// time, so signs queue (each waiting within its own context). Close may be
// called while signs are in flight: it closes the transport, and those
// signs return an error wrapping signer.ErrClosed.
//
// # Tracing
//
// Each APDU counts apdus and round-trips and is measured as a transport
// stage; HIDTransport counts hid-reports and bytes. Against ledgersim the
// device's modeled wire, confirm and device time — and, for the ledger-go
// model, the stall — reach the caller's signertrace.Trace as modeled stages
// (through ledgersim's Speculos face, with ledgersim.SpeculosDialer only).
//
// # Simulators
//
// The simulator in ledger/ledgersim plugs in at Config.Dial, the seam any
// caller has: its in-process faces, and its SpeculosDialer for its
// Speculos face (cmd/ledgersim), which passes the caller's deadline on and
// reports the simulator's modeled time. A simulator in accounted time
// fails an exchange that would run past the deadline with a
// *DeadlineError. Importing ledgersim registers the ledgersim: URI scheme.
// This package sends Speculos nothing but its own protocol, and a program
// that imports it alone links no simulator code.
//
// # Upstream defects worked around
//
//   - zondax/ledger-go v1.0.1 sleeps 50 ms before every APDU (drainRead) and
//     busy-loops its reader after Close; its Exchange takes no context. We
//     do not use it for HIDTransport; package ledgergo wraps it for those
//     who want it, and says how it copes.
//   - zondax/hid v0.9.2's Read blocks with no timeout and no way to set
//     one. A goroutine per open device reads reports into a queue; Close
//     closes the device, which wakes that read, and waits for the
//     goroutine. hidapi's hid_close frees the device while a woken
//     hid_read may still be returning; we cannot close that window from
//     outside the library.
//   - The app does not check Lc, does not check that P1 rises, and parses
//     only a one-byte length prefix: messages of 129 bytes and more come
//     back as parse error 7 (docs/protocols.md A.5). The client sends messages
//     as they are; a long chain id or a proposal at round > 0 on a long
//     chain is refused by the app, not by us.
//
// # Real devices in tests
//
// The tests and benchmarks run against ledgersim. SIGNERKIT_LEDGER=hid (the
// first Ledger) or SIGNERKIT_LEDGER=<hid path> runs the conformance suite
// and the benchmark rows against a real device running the validator app;
// SIGNERKIT_SPECULOS=host:port against Speculos. Signing on a real device
// moves its double-sign state forward: the tests sign at heights above the
// current Unix time in milliseconds.
package ledger
