// Package ledgersim is a simulated Ledger running the Tendermint validator
// app, for developing and benchmarking against with no device attached, in
// the manner of net/http/httptest. It is the app's behaviour, not a table
// of replies (docs/protocols.md A.3–A.6, A.11):
//
//   - GET_VERSION (0.9.1 unless Config.Version says otherwise) and
//     PUBLIC_KEY_ED25519 of a key from Config.Seed (Config.PresentKey
//     makes it answer another, such as the small-order SmallOrderKey, to
//     test a client against a lying device);
//   - CLA checked before the APDU's length, as the app does (a 2-byte
//     APDU of another class gets 0x6E00, not 0x6700);
//   - SIGN_ED25519 with the app's chunk rules (P1 == 1 resets the buffer,
//     Lc is ignored, P1 == P2 ends), its 16384-byte buffer (1024 with the
//     NanoS profile), its zero-size fallback buffer (a chunk with data
//     before the first P1 == 1 since the app started, or after an
//     overflow until the next P1 == 1, gets 0x6983), and its sign-bytes
//     parser (ParseSignBytes) with the
//     one-byte length-prefix rule (Config.LongPrefix lifts it) and the
//     app's parse-error codes;
//   - the double-sign state machine of A.6: a byte-identical retransmit is
//     refused, refusals do not change the state, and the state is lost
//     when the app restarts (OpenApp, Replug);
//   - the first sign's confirmation: accepted or rejected (Config.Confirm,
//     SetConfirm) after a modeled delay (Config.ConfirmDelay);
//   - app-closed (CloseApp: 0x6E00) and locked (SetLocked: 0x5515) modes.
//
// Config.Raw turns the device into a generic Ed25519 signer that signs any
// bytes, with no parser and no double-sign rules. That is NOT the
// validator app: it exists so payload sweeps can show what chunking costs.
// A ledger.Signer refuses sign bytes over 128 bytes before sending them
// unless its Config.MaxMessage is ledger.NoMessageLimit, which Raw and
// LongPrefix sweeps need.
//
// Where it is simpler than the app: its keys are always initialised (no
// 0x6986 for that reason), Replug powers up unlocked with the app open,
// and its device time does not grow with the message (docs/protocols.md
// A.11).
//
// # Faces
//
// Transport is the APDU-level face (a ledger.Transport). OpenHID is the
// 64-byte HID report face, framed as BOLOS does, that ledger.HIDTransport
// runs against; HIDDialer wraps it. ServeSpeculos is a Speculos-compatible
// TCP server on loopback for ledger.SpeculosDialer, ledger:speculos= URIs
// (signer.Open) and other Speculos clients. UpstreamStall
// (UpstreamDialer) adds zondax/ledger-go's 50 ms host-side stall before
// every APDU, to model the upstream transport without linking ledger-go.
//
// # Latency profile
//
// NanoSPlus comes from docs/latency-profiles.md §1 (Nano S Plus, firmware 1.6.0,
// USB full-speed HID): 526 ms of on-device Ed25519 per sign, 1 ms per
// 64-byte HID report each way (so a one-report command with its
// two-report signature reply costs the ~3 ms measured), and ledger-go's 50
// ms stall per APDU as a separate component, spent only by UpstreamStall.
// The device time does not grow with the message: the analysis measured
// votes only. Time is accounted by default: each component is reported to
// the caller's signertrace.Trace as a modeled stage (wire, confirm, device,
// stall) and the call returns at once, so a benchmark of a 530 ms sign runs
// in microseconds and still reports 530 modeled ms. With SIGNERKIT_SIM=
// realtime (or Config.Time) the device also sleeps it, within the
// caller's context. The APDU face models the wire as if over HID. The
// Speculos face reaches the caller's trace only through signerkit's own
// extension of Speculos's protocol, which this package's SpeculosDialer
// speaks: the modeled stages of each exchange then come back to the
// caller's trace. To any other client (ledger.SpeculosDialer included) it
// is plain Speculos, reports nothing, and only sleeps in realtime mode.
//
// Accounted time still honours the caller's deadline, on the APDU and HID
// faces: the modeled time spent under a context adds to the wall clock,
// and an exchange whose modeled time would run past the context's
// deadline fails at once with an error wrapping context.DeadlineExceeded,
// having reported its modeled time up to the deadline. So a 530 ms sign
// under a 300 ms context times out, as on a real device, without sleeping.
// (Modeled time under one context adds up across calls: several signs
// under one deadline share it.) The Speculos face honours it for a
// simulator client, which sends, before each APDU, the time its caller's
// deadline leaves: an exchange that would run past it gets, instead of
// its reply, the modeled time up to the deadline, and the client fails
// with a *ledger.DeadlineError (context.DeadlineExceeded). A standard
// Speculos client sends no deadline and gets its reply at once.
//
// # Plugging into package ledger
//
// Package ledger speaks only the device's protocols. Every face plugs in
// at ledger.Config.Dial: Device.Dialer and Device.HIDDialer in process,
// and SpeculosDialer for the Speculos face of a Device served elsewhere
// (cmd/ledgersim). Importing this package also registers the URI scheme
// ledgersim with signer.Open, for programs that open keys by URI, such as
// a daemon's tests: a ledgersim: URI is a ledger: URI that names the
// Speculos face, opened through SpeculosDialer (ParseURI):
//
//	ledgersim:speculos=127.0.0.1:9999
//
// and ledgersim:speculos=127.0.0.1:9999?stall=ledger-go adds UpstreamStall,
// slept, before every APDU: ledger-go's transport as a daemon would see it.
//
// # Faults
//
// Inject arms a Fault for the next APDU: FaultUnplug (the device vanishes
// mid-exchange; Replug brings it back), FaultHang (the APDU is lost),
// FaultGarbled, FaultShort, FaultWrongSequence and FaultWrongChannel (the
// reply's reports are corrupted; HID face), FaultStale (the previous reply
// queued again before the next exchange; HID face). Hang makes the device
// silent until released.
//
// # Concurrency
//
// A Device is safe for concurrent use and, like the real one, handles one
// APDU at a time. Each HIDPort, transport and server may be used from any
// goroutine.
package ledgersim
