// Package pkcs11 needs cgo: it loads a PKCS#11 module, a C shared library,
// through github.com/miekg/pkcs11. Built without cgo it compiles, and every
// open (Open, OpenStore, signer.Open of a pkcs11: URI) returns an error
// wrapping signer.ErrUnsupported.
//
// It makes keys on any PKCS#11 token signers: HSMs, the YubiHSM 2
// (yubihsm_pkcs11.so), YubiKeys (libykcs11.so), OpenPGP and PIV cards
// through OpenSC (opensc-pkcs11.so), and SoftHSM2 for tests.
//
// A Signer signs Ed25519 (CKM_EDDSA, pure, RFC 8032), ECDSA on P-256 and
// P-384 (CKM_ECDSA over a digest hashed in Go; r‖s from SignContext, ASN.1
// DER from Sign, as crypto.Signer requires) and RSA of 2048 to 4096 bits
// with PKCS #1 v1.5 (CKM_RSA_PKCS over a DigestInfo made in Go) or PSS
// (CKM_RSA_PKCS_PSS, MGF1 with the same hash). Keys made by other tools are
// found by label (CKA_LABEL) or id (CKA_ID): softhsm2-util --import,
// pkcs11-tool --keypairgen, yubihsm-shell.
//
// # Opening keys
//
// The package has the shape every signerkit backend has (see package
// signer). A Config names the module, the token (by label, serial,
// manufacturer, model or slot), the key (Config.Key, a signer.KeyRef) and
// the user PIN (Config.Secret, a signer.Secret). Open opens one key and
// returns its *Signer, whose Close releases the token's sessions and module
// again. OpenStore opens the token alone as a *Store, which implements
// signer.KeyOpener (OpenKey), KeyLister (ListKeys), KeyGenerator
// (GenerateKey, and Generate for other RSA sizes or a chosen CKA_ID),
// KeyImporter (ImportKey) and KeyDeleter (DeleteKey), and
// ExportableKeyGenerator and KeyWrapper: GenerateExportableKey makes a key
// CKA_EXTRACTABLE (still CKA_SENSITIVE; every other key is neither
// extractable nor exportable), and ExportWrapped and ImportWrapped move it
// through C_WrapKey and C_UnwrapKey (CKM_AES_KEY_WRAP_PAD) under an AES key
// that GenerateWrapKey makes on the token.
//
// ParseURI returns the Config an RFC 7512 pkcs11: URI describes, and the
// package registers the pkcs11 scheme, so that once it is imported
// signer.Open opens a key from one string:
//
//	import _ "github.com/signerkit/signerkit/pkcs11"
//
//	s, err := signer.Open(ctx, "pkcs11:token=validator;object=consensus"+
//		"?module-path=/usr/lib/softhsm/libsofthsm2.so&pin-source=env:TOKEN_PIN")
//
// The path attributes token, serial, manufacturer, model and slot-id select
// the token, object (CKA_LABEL) and id (CKA_ID) the key; the query
// attributes module-path or module-name the module, and pin-source
// (env:NAME, file:/path or /path) or pin-value the PIN. ParseURI lists
// them all. URI and DecodeURI read and write a URI attribute by attribute.
//
// Prefer pin-source to pin-value. A PIN in pin-value must be
// percent-encoded ('&' as %26, ';' as %3B, '?' as %3F, '#' as %23, '%' as
// %25): an unescaped '&' would cut it short, and a wrong PIN costs one of
// the token's few tries. So what follows an unescaped '&' in a PIN is
// refused, not sent to the token, unless it reads as a known attribute.
// No error quotes a PIN or any other query text, and a URI formats
// without its PIN whatever the fmt verb. A PIN file (pin-source=/path,
// signer.SecretFile) must be a regular file of at most 4 KiB that only
// its owner (this user, or root) may read or write: mode 0600 or 0400.
//
// # Keys read from the token
//
// Public keys are checked as they are read: an Ed25519 CKA_EC_POINT that
// is of small order or not canonically encoded (signer.CheckEd25519PublicKey:
// with one, a constant signature would verify for every message), an
// ECDSA point off its curve, an RSA modulus that is even or not of 2048
// to 16384 bits, or an exponent that is even or out of range, is refused
// with an error wrapping signer.ErrInvalidKey (signer.ErrUnsupported for
// the sizes), and ListKeys leaves such keys out. Public and Info return
// copies. A signature from the token of the wrong length (64 bytes for
// Ed25519 and P-256, 96 for P-384, the modulus's for RSA) is refused with
// an error wrapping signer.ErrProtocol.
//
// # Errors
//
// Errors wrap one of package signer's sentinels. A PKCS#11 return value is
// an *Error, which carries the CKR_ code and unwraps to the sentinel that
// fits it (signer.ErrProtocol for a code without one); a PIN the token
// refuses is a *PINError (signer.ErrWrongPassphrase); a URI that cannot be
// used is a *signer.URIError, which names the attribute at fault.
//
// # Sessions and concurrency
//
// Store and Signer are safe for concurrent use. A module is loaded once per
// path and shared by every token opened through it; the last one closed
// finalizes and unloads it (a module initialized by someone else in the
// process is left initialized). Each opened token has a pool of at most
// Config.PoolSize sessions (default 4), logged in; a sign checks one out,
// calls C_SignInit and C_Sign, and returns it, so up to PoolSize signs run
// on the token at once and the rest wait, within their context.
//
// A session that dies — CKR_SESSION_HANDLE_INVALID, CKR_SESSION_CLOSED,
// CKR_DEVICE_REMOVED, CKR_TOKEN_NOT_PRESENT, as after a C_CloseAllSessions
// by another library in the process or a token pulled out and put back — is
// forgotten (not closed: modules may already have given its handle to a
// new session), the idle sessions that died with it too, those that did
// not are closed, and the sign is retried on a new session. A session
// left with an operation active (CKR_OPERATION_ACTIVE) is closed and the
// sign retried too; one whose C_Sign failed is closed, since not every
// module ends the operation then. PKCS#11 keeps one login for all of an
// application's sessions and forgets it when the last one closes, so a new
// session is logged in if the token is not, and a sign that meets
// CKR_USER_NOT_LOGGED_IN (or a key lookup that finds nothing while the
// login went) logs in and is retried, as is a sign whose key handle the
// module refused, after looking the key up again. These retries, all
// counted together, go on, the first at once and then with a backoff of up
// to 50ms, until the sign's context reaches its deadline (32 of them in
// all for a context without one). A
// module loaded through two paths to one file (a symlink and its target)
// is one module, initialized and finalized once. A PIN the token
// refuses is a *PINError (wrapping signer.ErrWrongPassphrase) and is never
// tried again: the pool that got it refuses to log in from then on, since
// tokens lock after a few wrong PINs.
//
// A module is initialized with signerkit's mutexes (Config.Locking,
// default LockingSpin): PKCS#11 lets the application hand C_Initialize its
// CreateMutex, DestroyMutex, LockMutex and UnlockMutex, and these spin for
// a few microseconds before they sleep. Software tokens take process-wide
// locks many times a sign for less time than a futex sleep and wake-up
// cost: SoftHSM2 2.6.1 registers every buffer it allocates in one map
// under one mutex, about 50 times per P-256 sign. That, not the pool, is
// what stops two threads from signing twice as fast. A module that refuses
// the mutexes is initialized with its own.
//
// A sign calls the module's C_SignInit and C_Sign itself, read from its
// function list, in one call from Go with a buffer of the signature's
// length (a module that wants more gets a second C_Sign). When the list
// cannot be read, signs go through miekg/pkcs11.
//
// SignContext honours its context: with a context that can end, the token
// calls run on a goroutine and the caller gets ctx.Err() at the deadline
// even if the token hangs; the session returns to the pool when the token
// answers. The hand-off costs a few microseconds a sign; a context that
// cannot end (Done() nil) signs on the caller's goroutine. Sign, the crypto.Signer method, has no
// context: it is bounded by Config.SignTimeout (DefaultSignTimeout, 10 s)
// and pays that hand-off. A PKCS#11 call cannot be interrupted, so the
// bound frees the caller, not the session: a token that never answers
// keeps its session, and the goroutine in the call, until it does, and
// once all PoolSize sessions are held so, every sign waits for a session
// until its deadline. Open, OpenStore and Store.OpenKey return
// at their deadline the same way; the key-store calls (GenerateKey,
// ImportKey, ListKeys, DeleteKey) wait for a session within ctx but finish
// a module call once it started. Close is idempotent; signs in flight
// finish, later ones fail with signer.ErrClosed. A Store's sessions close
// when the Store and every Signer opened from it are closed.
//
// # How far signing scales
//
// Two limits outside this package decide how much faster two goroutines
// sign than one. The token: a software token's own locks (SoftHSM2's
// above) serialize part of every sign, which no pool can undo. Go: a cgo
// call longer than a sysmon tick (20 µs) is a system call to the
// scheduler, which, when no P is idle, hands the caller's P to another
// thread and makes each sign pay thread wake-ups (golang/go#19574).
// BenchmarkSignParallel and BenchmarkSignScaling measure both in the same
// run as the Signer, beside bare miekg/pkcs11 sessions, crypto/ecdsa and a
// C loop as long as one sign (internal/cgoloop) called through cgo and in
// Go; docs/measurements.md has what they found on SoftHSM2. A hardware
// token's sign takes milliseconds on the device, next to which the
// hand-off is small; how it scales is the device's.
//
// # Tracing
//
// A sign reports to the signertrace.Trace in its context: StageSession, the
// checkout of a session (with the C_OpenSession and C_Login when they
// happen, and the key's handle looked up again after a login), and
// StageDevice, C_SignInit and C_Sign; counters round-trips
// (PKCS#11 calls: 2 a sign) and retries. Both stages are measured; nothing is
// modeled. A sign that has to open a session and log in pays for it in
// the session stage; docs/latency-profiles.md ("SoftHSM2 via PKCS#11")
// has SoftHSM2's figures.
//
// # Upstream defects worked around
//
// github.com/miekg/pkcs11 v1.1.1 stops at PKCS#11 2.40: CKK_EC_EDWARDS,
// CKM_EC_EDWARDS_KEY_PAIR_GEN and CKM_EDDSA are defined here (unexported). Its New
// returns nil whatever dlopen said, so the module path is checked first for
// a useful error. Its GetAttributeValue fails a whole request when one
// attribute is missing, so optional attributes are read one at a time. Its
// Sign calls C_Sign twice (length, then signature) and its SignInit
// allocates the mechanism in C each time; signs skip both (see above).
// SoftHSM2 refuses a NULL message pointer even for an empty message
// (CKR_ARGUMENTS_BAD), and then keeps the sign operation active, against
// PKCS#11 (v2.40 §5.11): an empty message is passed as a valid pointer, and
// a session whose C_Sign failed is closed rather than reused.
// miekg/pkcs11's Login takes the PIN as a string, which cannot be wiped:
// the slice Config.Secret returns is wiped after the call, but that copy
// lives until the garbage collector reuses its memory. Tokens differ in how they write Ed25519
// keys: CKA_EC_PARAMS as the OID 1.3.101.112 (SoftHSM2) or the
// PrintableString "edwards25519" (OpenSC's pkcs11-tool) are both accepted,
// and CKA_EC_POINT with or without its DER OCTET STRING wrapper. SoftHSM2
// forgets the handles of private objects on logout, so a Signer looks its
// handle up again after the pool logs in. EC private keys carry no public
// point, so it is read from the public key object with the same CKA_ID (or
// label). The scheme of an RSA key made for PSS is kept as
// CKA_ALLOWED_MECHANISMS = {CKM_RSA_PKCS_PSS} on its public key object, so
// ListKeys reports it; the private key signs with either scheme.
//
// # Testing and benchmarks
//
// Package pkcs11test makes throwaway SoftHSM2 tokens (its own
// SOFTHSM2_CONF in a temporary directory) for tests; the tests of this
// package run the conformance and key store suites on them, and are
// skipped when SoftHSM2 is absent unless SIGNERKIT_REQUIRE_SOFTHSM is set.
// A real token joins with SIGNERKIT_PKCS11_URI (and SIGNERKIT_PKCS11_MODULE
// when the URI has no module-path, SIGNERKIT_PKCS11_PIN when it has no
// PIN), for TestRealToken and the benchmark row pkcs11-token.
//
// SoftHSM2 2.6 has a known concurrency bug (SoftHSMv2 issue 573): a key
// generated or imported while another session of the process looks keys
// up on the same token (OpenKey, ListKeys) now and then fails with
// CKR_GENERAL_ERROR or CKR_TEMPLATE_INCONSISTENT. Signing alongside does
// not trigger it. With SoftHSM2, make keys before opening others, as the
// tests here do.
//
// The module's BenchmarkSign rows are pkcs11-softhsm-ed25519, -p256,
// -rsa2048 and -rsa4096, beside raw-pkcs11-softhsm-ed25519, a bare
// miekg/pkcs11 C_SignInit + C_Sign. This package adds BenchmarkOverhead
// (a sign through a Signer and a bare one in each iteration, wall and CPU
// time: what the pool and the tracing cost), BenchmarkSignParallel
// (b.RunParallel through pools of 1 and 4, beside a C loop as long as one
// sign called through cgo and the same loop in Go; run with -cpu 1,2) and
// BenchmarkSignScaling (throughput of two goroutines over one, beside the
// same for bare sessions, for crypto/ecdsa and for the cgo loop). To read
// them:
//
//	go test -run '^$' -bench 'SignParallel/backend=(cgo-loop|go-loop|pkcs11-softhsm-p256)' -cpu 1,2 -count 6 . > par.txt
//	benchstat par.txt
package pkcs11
