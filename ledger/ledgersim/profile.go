package ledgersim

import "time"

// Profile is a device's latency model and size limits.
type Profile struct {
	// Name names the profile and its source, as reported in
	// signertrace.StageInfo.Profile.
	Name string
	// Sign is the on-device Ed25519 time of one SIGN_ED25519 that signs.
	Sign time.Duration
	// Report is the USB time of one 64-byte HID report, each way (a
	// full-speed interrupt endpoint with bInterval 1 moves one report per
	// 1 ms frame).
	Report time.Duration
	// BufferSize is the app's sign-bytes buffer.
	BufferSize int
	// UpstreamStall is zondax/ledger-go's host-side sleep before every
	// APDU (drainRead), modeled by UpstreamStall for the ledger-go
	// transport; it is the host's, not the device's, and the simulator's
	// own faces never spend it.
	UpstreamStall time.Duration
}

// NanoSPlus is the Ledger Nano S Plus running the validator app, from
// docs/latency-profiles.md §1 (firmware 1.6.0, USB full-speed HID): ~526 ms of
// on-device Ed25519 per sign; 1 ms per HID report each way, which gives
// the ~3 ms wire round trip measured for a one-report command and its
// two-report signature reply (docs/protocols.md A.9); and ledger-go's 50 ms
// sleep per APDU as its own component. The 16384-byte buffer is the app's
// (docs/protocols.md A.4).
var NanoSPlus = Profile{
	Name:          "nanosplus (docs/latency-profiles.md §1)",
	Sign:          526 * time.Millisecond,
	Report:        time.Millisecond,
	BufferSize:    16384,
	UpstreamStall: 50 * time.Millisecond,
}

// NanoS is a Ledger Nano S: the app's 1024-byte buffer (docs/protocols.md A.4)
// with the Nano S Plus's timings, since no Nano S figures are published.
var NanoS = Profile{
	Name:          "nanos (buffer: docs/protocols.md A.4; timings: nanosplus, docs/latency-profiles.md §1)",
	Sign:          NanoSPlus.Sign,
	Report:        NanoSPlus.Report,
	BufferSize:    1024,
	UpstreamStall: NanoSPlus.UpstreamStall,
}

// stallProfile names the source of the modeled ledger-go stall.
const stallProfile = "ledger-go drainRead 50ms (docs/latency-profiles.md §1, docs/protocols.md A.8)"

// reportCount returns the number of 64-byte HID reports that carry an
// n-byte APDU or response: 57 bytes in the first, 59 in each next.
func reportCount(n int) int {
	if n <= 57 {
		return 1
	}
	return 1 + (n-57+58)/59
}
