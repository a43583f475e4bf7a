// Package yubihsmsim is a simulated YubiHSM 2 served as a yubihsm-connector,
// for tests and benchmarks of code that talks to the device over HTTP, in
// the manner of net/http/httptest. The yubihsm package's real client, and
// the real certusone/yubihsm-go client, run against it unchanged.
//
// A Device holds objects (authentication keys, Ed25519 and P-256 keys) and
// 16 session slots, and implements the device side of SCP03 as the YubiHSM
// 2 does (docs/protocols.md B.4): session keys, card and host cryptograms, the
// MAC chain, responses encrypted under the command's IV, the R-MAC that
// does not move the chain, and the counter; the known-answer values of B.4
// come out exactly.
//
// # Commands
//
// Outside a session it answers Echo, Device Info, Create Session and
// Authenticate Session, and Session Message carries the rest. Inside a
// session it answers Echo, Device Info, Close Session, Put and Generate
// Asymmetric Key (OBJECT EXISTS rather than overwrite), Get Public Key,
// Sign EdDSA, Sign ECDSA (DER), List Objects, Get Object Info, Delete
// Object, Get Pseudo Random (up to MaxPseudoRandom bytes, needing the
// get-pseudo-random capability), Blink Device (accepted, nothing lit),
// Get Storage Info (StorageRecords records, StoragePages pages of
// StoragePageSize bytes), Put and Get Opaque (up to MaxOpaque bytes), Put
// Authentication Key (AES-128 only) and Change Authentication Key (the
// session's own key only; the open session keeps its keys), and Get and
// Set Option (force audit, command audit, and the algorithm toggle that
// get_enabled_algorithms reads; disabled algorithms are reported, not
// enforced; other options get INVALID DATA), checking the capabilities
// and domains of the session's authentication key and of the key. Audit
// log entries and Set Log Index are not implemented yet. Device Info is paged as on firmware 2.4.0, the version it
// reports: no data or page 0 gives the version, serial, log counters and
// algorithms, page 1 the part number (PartNumber), as Yubico's SDK asks on
// connect. Every other command, plain or in a session, gets what the
// device answers a command it does not support (libyubihsm documents
// YHR_DEVICE_INVALID_COMMAND for that): an error frame with INVALID
// COMMAND (yubihsm.CodeInvalidCommand); the sim keeps the session open.
// It refuses what it cannot do with the device's error codes, the yubihsm
// package's ErrorCode values (yubihsm.CodeObjectNotFound and so on).
// Sessions expire after 30 s without a command on the Device's clock (Config.Clock, which tests move on themselves), and a 17th session
// gets SESSIONS FULL. Every command runs under one lock, as the device
// serialises them.
//
// Device.Handler serves the connector's API (POST /connector/api with
// bodies of 3 to 3139 bytes, GET /connector/status; docs/protocols.md B.6): in
// tests through httptest.NewServer, for users through NewServer, a
// loopback listener that Down and Up take away and bring back on the same
// address.
//
// # Latency
//
// The YubiHSM2 profile models the device time of Sign EdDSA (piecewise
// linear in the message size between Yubico's figures: 105 ms at 32 B,
// 121 ms at 64 B, 137 ms at 128 B, … 353 ms at 1024 B; ≈ 132 ms for a
// 108-byte vote) and of Sign ECDSA on P-256 (73 ms), from Yubico's product
// overview as quoted in docs/latency-profiles.md §2. Commands without a
// published figure take no modeled time. By default the time is only
// accounted (Accounted): the device reports it as a signer.Modeled
// StageDevice, sent back in the X-Signerkit-Modeled response header, which
// the yubihsm client reports on the caller's trace when its
// yubihsm.Config.Simulator is set (a client configured for a real
// connector ignores the header). With Config.Time
// Realtime, or with the zero Config.Time (TimeFromEnv) when the environment
// variable SIGNERKIT_SIM is realtime, it also sleeps it, holding the device
// lock, as a busy device would; ledger/ledgersim reads the same variable.
// Unlike ledger/ledgersim, accounted time does not yet count against the
// caller's deadline: the caller's context does not cross the HTTP face.
//
// # Faults
//
// Inject turns on FaultUnplugged (HTTP 500, status=NO_DEVICE, sessions
// lost), FaultHang (no answer until cleared), FaultCorruptMAC,
// FaultGarble and FaultWrongLength (responses damaged after the device
// executed the command), FaultSmallOrderKey (Get Public Key presents the
// identity point for Ed25519 keys); ExpireSessions, or a Config.Clock moved past
// IdleTimeout, expires sessions; Server.Down and Up take the connector away
// and back.
//
// A Device is safe for concurrent use.
package yubihsmsim
