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
// session's own key only; the open session keeps its keys), Get and Set
// Option, Get Log Entries and Set Log Index, and Put and Generate Wrap
// Key (AES-128, -192 and -256 CCM), Export Wrapped and Import Wrapped
// (format 0: the nonce, then the object sealed with AES-CCM, 13-byte nonce
// and 16-byte tag, in the layout of Yubico's yubihsm-wrap tool, which a
// device imports; an object must be exportable-under-wrap and within the
// wrap key's delegated capabilities, and the wrap key and the session's
// key need export-wrapped or import-wrapped), checking the capabilities
// and domains of the session's authentication key and of the key. Every other command, plain or in a session, gets what the
// device answers a command it does not support (libyubihsm documents
// YHR_DEVICE_INVALID_COMMAND for that): an error frame with INVALID
// COMMAND (yubihsm.CodeInvalidCommand); the sim keeps the session open.
// It refuses what it cannot do with the device's error codes, the yubihsm
// package's ErrorCode values (yubihsm.CodeObjectNotFound and so on).
// Sessions expire after 30 s without a command on the Device's clock
// (Config.Clock, which tests move on themselves), and a 17th session gets
// SESSIONS FULL. Every command runs under one lock, as the device
// serialises them.
//
// Device Info is paged as on firmware 2.4.0, the version it reports: no
// data or page 0 gives the version, serial, the log's size (LogSize) and
// use, and the algorithm codes the sim implements (Algorithms(): a real
// device lists 1 to MaxAlgorithm);
// page 1 the part number (PartNumber), as Yubico's SDK asks on connect.
// Keys exist only for Ed25519 and P-256; asking for another kind gets
// INVALID DATA.
//
// Options: force audit, command audit (every command listed, in the
// device's order) and the algorithm toggle that get_enabled_algorithms
// reads (the algorithms Device Info lists; 0 off, 1 on, 2 fixed on). An
// algorithm turned off is refused with ALGORITHM DISABLED
// (yubihsm.CodeAlgorithmDisabled) when a key of it is generated, put or
// used to sign, or an opaque object of it is put. FIPS mode gets INVALID
// DATA (no FIPS device).
//
// # Audit log
//
// The Log Store holds LogSize (62) entries of LogEntryLen bytes, chained
// as the device chains them: each entry's digest is the first 16 bytes of
// SHA-256 of its other 16 bytes followed by the previous entry's digest,
// which python-yubihsm's LogEntry.validate and libyubihsm's yh_verify_logs
// check. A new device has the two entries a factory-reset YubiHSM 2
// shows (the reset line and the boot line, with that device's digests);
// FaultUnplugged adds a boot line. Commands are logged when force audit
// is on or their command-audit setting is (off for every command by
// default, as on firmware 2.3.1 and later); Echo, Device Info and Get Log
// Entries never are. An entry records the command, its payload length,
// the session's authentication key (0xffff while a session is opened),
// the object named, and the response's first byte as result (0x7f for an
// error). Set Log Index drops entries up to the index, so Get Log Entries
// returns the unread ones. With force audit off a full store drops its
// oldest entry; with it on, a command that would be logged gets LOG FULL
// and does not run, while Create and Authenticate Session still work and
// are counted as unlogged authentications.
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
// accounted (Accounted): the device reports it as a signertrace.Modeled
// StageDevice, sent back in the X-Signerkit-Modeled response header. With
// Config.Time Realtime, or with the zero Config.Time (TimeFromEnv) when
// the environment variable SIGNERKIT_SIM is realtime, it also sleeps it,
// holding the device lock, as a busy device would; ledger/ledgersim reads
// the same variable.
//
// Accounted time still honours the caller's deadline, as in
// ledger/ledgersim. Handle measures a command's modeled time against its
// context's deadline; over the connector, the sim measures against the
// X-Signerkit-Time-Left request header, the time the caller's deadline
// leaves. A command whose modeled time would run past the deadline is
// executed, as a real device executes a command its host gave up
// waiting for, but not answered: Handle returns an error wrapping
// context.DeadlineExceeded and the connector answers 504 with the time
// accounted up to the deadline. A request without the header is bounded
// by its own context only.
//
// # Plugging into package yubihsm
//
// The yubihsm package speaks only yubihsm-connector's protocol. The
// simulator's extension of it lives here, in HTTPClient, which goes in
// yubihsm.Config.HTTPClient:
//
//	yubihsm.Config{Connector: srv.URL(), Secret: secret, HTTPClient: yubihsmsim.HTTPClient()}
//
// With it the modeled device time is on the caller's trace, the caller's
// deadline reaches the simulator, and a command whose modeled time would
// run past the deadline fails with a *yubihsm.DeadlineError wrapping
// context.DeadlineExceeded. So a 531 ms sign under a 300 ms context fails
// at once, with 300 ms or less of device time on the caller's trace.
// Without it the simulator is a plain connector to the client: device
// time is inside the transport stage, and no deadline is passed on.
//
// Importing this package also registers the URI scheme yubihsmsim with
// signer.Open: a yubihsmsim: URI has the attributes of a yubihsm: URI
// (yubihsm.ParseURI) and opens the key with HTTPClient, for a program
// that opens keys by URI, such as a daemon's tests:
//
//	yubihsmsim:connector=http://127.0.0.1:12345;label=validator?pin-value=password
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
