// Package yubihsm signs with Ed25519 and ECDSA P-256 keys held in a
// YubiHSM 2, reached through Yubico's yubihsm-connector over its HTTP API
// (POST /connector/api, GET /connector/status; protocols.md B.6).
//
// Open authenticates to the device with an authentication key id and
// password and returns a Client, which manages keys: it implements
// signer.KeyGenerator, KeyImporter, KeyLister, KeyOpener and KeyDeleter
// (generate and put Ed25519 and P-256 keys, list them, find them by object
// id or label, read their public keys, delete them). Client.Key (or
// OpenKey, or OpenSigner in one step) opens a key as a *Key, a
// signer.Signer:
//
//	c, err := yubihsm.Open(ctx, yubihsm.Config{URL: "http://127.0.0.1:12345", Password: pw})
//	k, err := c.Key(ctx, signer.KeyRef{Label: "validator"})
//	sig, err := k.SignContext(ctx, voteSignBytes)
//
// Ed25519 keys sign the message itself (Sign EdDSA, at most
// MaxEd25519Message bytes); P-256 keys sign its SHA-256 (Sign ECDSA), and
// SignContext returns r‖s while Sign returns ASN.1 DER, as crypto.Signer
// expects.
//
// # Sessions and concurrency
//
// Every command runs inside an SCP03 session (protocols.md B.4). The
// password is turned into the authentication key once, by Open (PBKDF2,
// B.3); the password itself is not kept, and the derived key is wiped when
// the Client and every Key opened from it are closed. Config.Password is a
// slice the caller may wipe after Open; Config.PasswordFunc hands one over
// that Open wipes itself.
//
// A Key keeps Config.Sessions sessions of its own (one by default), opened
// on first use. Client, Key and their methods are safe for concurrent use;
// signs on one Key queue for its sessions, and the device runs one command
// at a time whatever the number of sessions. A session is:
//   - replaced before Config.MessageLimit commands (9,000 by default; the
//     client's hard limit is 10,000), the new one opened before the old one
//     is closed, so no sign fails at the limit;
//   - pinged with Echo every Config.KeepAlive (15 s) while idle, since the
//     device drops a session after 30 s without a command;
//   - recreated, and the command retried once, when the device answers
//     INVALID SESSION or AUTHENTICATION FAILED (the session expired or fell
//     out of step), as yubihsm-shell does (B.5);
//   - dropped after a transport or protocol failure and closed in the
//     background, so the next sign starts afresh once the fault clears;
//   - closed by Close, which waits for signs in flight.
//
// Every sign honours its context: the wait for a session, session setup and
// each HTTP request end when ctx does, and Config.RequestTimeout bounds a
// request whatever the context (the HTTP client has dial, header and total
// timeouts and never goes through a proxy).
//
// # Errors
//
// A refusal by the device is a *DeviceError carrying its code; it unwraps
// to a signer sentinel (OBJECT NOT FOUND to ErrKeyNotFound, OBJECT EXISTS
// to ErrKeyExists, INSUFFICIENT PERMISSIONS to ErrPermissionDenied,
// SESSIONS FULL to ErrBusy, INVALID SESSION to ErrSessionExpired,
// AUTHENTICATION FAILED to ErrWrongPassphrase, …). A connector that does not
// answer or answers HTTP 500 (device unplugged) gives an error wrapping
// signer.ErrDisconnected; a response that breaks the protocol (bad R-MAC,
// garbled frame, wrong length field) one wrapping signer.ErrProtocol. A
// wrong password fails Open with signer.ErrWrongPassphrase. Errors never
// contain the password or key material.
//
// # Tracing
//
// A sign reports to the signer.Trace in its context: StageSession when it
// has to open a session (measured), StageTransport for each HTTP round trip
// (measured), and StageDevice when the connector is the simulator in
// yubihsm/yubihsmsim, which sends its modeled device time back in the
// simtime.Header response header (a real connector sends none: device time
// is then inside the transport stage). Counters: round-trips, bytes-out,
// bytes-in and retries.
//
// # github.com/certusone/yubihsm-go
//
// The package uses yubihsm-go v0.3.0 for command encoding and its SCP03
// SecureChannel, and replaces the rest. Its defects (protocols.md B.7) and
// how they are worked around:
//   - its HTTPConnector uses http.DefaultClient, without timeouts: we pass
//     the SecureChannel a connector of our own over an HTTP client with
//     timeouts, carrying the caller's context;
//   - its SessionManager races and fails at 10,000 messages: we keep our
//     own sessions (above);
//   - its response parser panics on short session messages and device
//     info: every response is checked before it sees it, and any panic
//     left is recovered as a protocol error;
//   - it does not check that a response carries its session's id: we do;
//   - it misreads the id of a generated key (payload[1:3]): GenerateKey
//     finds the new key by label instead;
//   - it takes the password as a string it cannot wipe: we derive the key
//     once from a []byte and set it on each channel (NewSecureChannel still
//     runs PBKDF2 on an empty password for every session, about 2 ms once
//     per 9,000 commands, which cannot be avoided from outside);
//   - after a response it refuses (bad R-MAC) it does not count the command
//     the device has counted: we do, so the dropped session can be closed
//     rather than left to expire;
//   - it moves the MAC chain on before it sends a command, so one that
//     gets no answer (a hung device, a connector gone) leaves the session
//     out of step whether or not the device ran it: we step the chain
//     back, and the Close Session of the dropped session tries the state
//     of the other case if the device refuses the first.
//
// # PKCS#11
//
// Yubico's PKCS#11 module, yubihsm_pkcs11.so (part of the YubiHSM 2 SDK),
// makes the same device usable through this module's pkcs11 backend, with
// the connector URL in its configuration file and "<auth key id><password>"
// (e.g. "0001password") as the PIN.
//
// # Testing
//
// The package's tests run the signertest conformance and key store suites,
// fault injection and a 100,000-sign run against yubihsm/yubihsmsim, and
// against a real YubiHSM 2 when SIGNERKIT_YUBIHSM names its connector
// (e.g. SIGNERKIT_YUBIHSM=http://127.0.0.1:12345; SIGNERKIT_YUBIHSM_PASSWORD
// sets the password of auth key 1, "password" by default). The
// benchmark rows backend=yubihsm-ed25519 and backend=yubihsm-p256 use the
// simulator, whose device times come from Yubico's published figures
// (latency-profiles.md §2).
package yubihsm
