// Package yubihsm signs with Ed25519 and ECDSA P-256 keys held in a
// YubiHSM 2, reached through Yubico's yubihsm-connector over its HTTP API
// (POST /connector/api, GET /connector/status; docs/protocols.md B.6).
//
// Like every signerkit backend it has a Config, Open, OpenStore and
// ParseURI, and registers a URI scheme with the signer package (see "One
// shape for every backend" there). Open opens one key as a *Signer, a
// signer.AlgorithmSigner; OpenStore returns a *Store, which manages keys:
// it implements signer.KeyGenerator, KeyImporter, KeyLister, KeyOpener and
// KeyDeleter (generate and put Ed25519 and P-256 keys, list them, find them
// by object id or label, read their public keys, delete them), and
// signer.ExportableKeyGenerator and KeyWrapper (keys with the
// exportable-under-wrap capability, exported and imported encrypted under
// a wrap key with Export and Import Wrapped); PutAuthKey, PutWrapKey,
// DeleteObject and SetOption set a device up. Its OpenKey opens a key as a
// *Signer too:
//
//	k, err := yubihsm.Open(ctx, yubihsm.Config{
//		Connector: "http://127.0.0.1:12345",
//		Secret:    signer.SecretFile("/run/secrets/hsm"),
//		Key:       signer.KeyRef{Label: "validator"},
//	})
//	sig, err := k.SignContext(ctx, voteSignBytes)
//
// or, with the package imported, from one string:
//
//	k, err := signer.Open(ctx, "yubihsm:connector=http://127.0.0.1:12345;label=validator?pin-source=/run/secrets/hsm")
//
// Ed25519 keys sign the message itself (Sign EdDSA, at most
// MaxEd25519Message bytes); P-256 keys sign its SHA-256 (Sign ECDSA), and
// SignContext returns r‖s while Sign returns ASN.1 DER, as crypto.Signer
// expects.
//
// # URIs
//
// A yubihsm: URI has the form RFC 7512 gives PKCS#11 URIs (signer.URI):
//
//	yubihsm:connector=http://127.0.0.1:12345;auth-key=1;id=0x0a01;label=validator;algorithm=ed25519?pin-source=env:HSM_PASS&sessions=2
//
// Its path says where the device is and which key to open:
//
//	connector   the yubihsm-connector's URL (Config.Connector);
//	            http://127.0.0.1:12345 when left out
//	auth-key    the authentication key's object id (Config.AuthKeyID),
//	            in hex like id; 1 when left out
//	id          the key's object id in hex, 0x optional, as ListKeys and
//	            yubihsm-shell write it (0a01, 0x0a01): ids are hex
//	            throughout, so id=10 is object 0x0010
//	label       the key's label, 1 to 40 bytes
//	algorithm   ed25519 or p256: the key must be of this algorithm
//
// and its query how to reach it:
//
//	pin-source       where the authentication key's password is: env:NAME,
//	                 file:/path or /path (the file's first line)
//	pin-value        the password itself, for those who write it knowingly
//	sessions         sessions the Signer keeps, 1 to 16 (Config.Sessions)
//	message-limit    commands per session, 1 to 9999 (Config.MessageLimit)
//	keep-alive       how often idle sessions are pinged, a duration such as
//	                 15s, or off (Config.KeepAlive)
//	request-timeout  the bound on each HTTP request, a duration such as 10s
//	                 (Config.RequestTimeout)
//	sign-timeout     the bound on Sign, which takes no context, a duration
//	                 such as 10s (Config.SignTimeout)
//	domains          the domains of keys a Store creates: numbers from 1 to
//	                 16 separated by commas, or all (Config.Domains)
//
// Write ';', '?', '&' and '%' inside a value as %3B, %3F, %26 and %25.
// ParseURI checks every attribute; its errors are *signer.URIError values
// that name the attribute and never quote pin-value. signer.Open and
// signer.OpenSecret need id or label, and a password from pin-source,
// pin-value or, when the URI names neither, the caller's Secret.
//
// # Sessions and concurrency
//
// Every command runs inside an SCP03 session (docs/protocols.md B.4). The
// password is turned into the authentication key once, by Open or
// OpenStore (PBKDF2, B.3), which call Config.Secret for it and wipe what it
// returns; the password itself is not kept, and the derived key is wiped
// when the Store and every Signer opened from it are closed (for Open, when
// its Signer is).
//
// A Signer keeps Config.Sessions sessions of its own (one by default),
// opened on first use; a Store keeps one. Store, Signer and their methods
// are safe for concurrent use; signs on one Signer queue for its sessions,
// and the device runs one command at a time whatever the number of
// sessions. A session is:
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
// request whatever the context and whatever the client, Config.HTTPClient
// included (the package's own client also has dial, header and total
// timeouts and never goes through a proxy). Sign, the crypto.Signer
// method, has no context: it is bounded by Config.SignTimeout
// (DefaultSignTimeout, 10 s), after which it fails with an error wrapping
// context.DeadlineExceeded and the session it held is dropped.
//
// # Keys the device presents
//
// Public keys read from the device (Get Public Key, when listing, finding,
// opening, generating or importing a key) are checked: an Ed25519 key of
// small order or in a non-canonical encoding, which no seed gives and
// which would let one constant signature verify for every message, is
// refused with an error wrapping signer.ErrInvalidKey; a P-256 point off
// the curve with one wrapping signer.ErrProtocol. Public returns a copy of
// the key, which the caller may modify. ImportKey checks that the private
// key's public half belongs to it before anything reaches the device.
//
// # Errors
//
// Errors start with "yubihsm: ", once, however deep the failure. A refusal
// by the device is a *DeviceError carrying its ErrorCode; it unwraps to a
// signer sentinel (OBJECT NOT FOUND to ErrKeyNotFound, OBJECT EXISTS to
// ErrKeyExists, INSUFFICIENT PERMISSIONS to ErrPermissionDenied, SESSIONS
// FULL to ErrBusy, INVALID SESSION to ErrSessionExpired, AUTHENTICATION
// FAILED to ErrWrongPassphrase, …). A connector that does not answer or
// answers HTTP 500 (device unplugged) gives an error wrapping
// signer.ErrDisconnected (signer.ErrDeviceNotFound from Open and
// OpenStore); a response that breaks the protocol (bad R-MAC, garbled
// frame, wrong length field) one wrapping signer.ErrProtocol. A wrong
// password fails Open and OpenStore with signer.ErrWrongPassphrase (and
// leaves a session begun on the device, which it drops after 30 s: without
// the password it cannot be closed). Errors never contain the password or
// key material, nor a connector URL's credentials (which are refused).
//
// # Tracing
//
// A sign reports to the signertrace.Trace in its context: StageSession when it
// has to open a session (measured) and StageTransport for each HTTP round
// trip (measured), which holds the device's time. Counters: round-trips,
// bytes-out, bytes-in and retries. The package sends a connector nothing
// but yubihsm-connector's protocol and reads nothing else back.
//
// # Simulators
//
// The simulator in yubihsm/yubihsmsim plugs in at Config.HTTPClient, the
// seam any caller has: its HTTPClient reports the simulator's modeled
// device time on the caller's trace and, in accounted time, passes the
// caller's deadline on, failing a command that would run past it with a
// *DeadlineError. Its package doc says how, and that importing it
// registers the yubihsmsim: URI scheme. A program that imports this
// package alone links no simulator code.
//
// # github.com/certusone/yubihsm-go
//
// The package uses yubihsm-go v0.3.0 for command encoding and its SCP03
// SecureChannel, and replaces the rest. Its defects (docs/protocols.md B.7) and
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
//     once from the []byte Config.Secret returns and set it on each
//     channel (NewSecureChannel still runs PBKDF2 on an empty password for
//     every session, which cannot be avoided from outside);
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
// (docs/latency-profiles.md §2).
package yubihsm
