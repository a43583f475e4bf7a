package pkcs11

import (
	"fmt"
	"time"

	"github.com/signerkit/signerkit/signer"
)

// DefaultPoolSize is the number of sessions a Store's pool keeps open at
// most when Config.PoolSize is 0.
const DefaultPoolSize = 4

// DefaultSignTimeout bounds a crypto.Signer Sign, which has no context of
// its own, when Config.SignTimeout is zero.
const DefaultSignTimeout = 10 * time.Second

// Config says which module, token and key to open, and how. ParseURI gives
// the Config a pkcs11: URI describes. Open uses every field; OpenStore all
// but Key.
type Config struct {
	// Module is the path of the PKCS#11 module, a shared library such as
	// /usr/lib/softhsm/libsofthsm2.so; a bare file name is searched for
	// by the dynamic loader. It is required.
	Module string

	// TokenLabel, TokenSerial, TokenManufacturer and TokenModel select the
	// token whose fields equal every one of them that is not empty, and
	// SlotID, when not nil, the slot it must be in. With no selector at
	// all the module must show exactly one initialized token.
	TokenLabel, TokenSerial, TokenManufacturer, TokenModel string
	SlotID                                                 *uint

	// Key names the private key that Open opens: by Label (CKA_LABEL), by
	// ID (CKA_ID, in lower-case hex as KeyInfo.ID gives it) or by both,
	// which must then both match. Key.Algorithm, when set, is the
	// algorithm the Signer uses and must fit the key: it is how an RSA key
	// signs with signer.RSAPSS; zero means the one the key's type implies
	// (signer.RSAPKCS1v15 for RSA keys, unless the key was made for PSS).
	// Open needs a label or an ID; OpenStore ignores Key.
	Key signer.KeyRef

	// Secret returns the token's user PIN. It is called each time the
	// pool must log in (when the token is opened, and again after the
	// token forgot the login, e.g. when every session was closed), so the
	// PIN need not stay in memory in between; the slice it returns is
	// wiped after use. Nil means no login, for tokens whose keys are
	// usable in a public session.
	Secret signer.Secret

	// PoolSize is the most sessions the token's pool opens at once; 0 (or
	// less) means DefaultPoolSize. Signs beyond it wait for a session,
	// within their context.
	PoolSize int

	// SignTimeout bounds Sign, the crypto.Signer method, which takes no
	// context: after it, Sign returns an error wrapping
	// context.DeadlineExceeded, whether it was still waiting for a session
	// (all PoolSize in use, or one being opened and logged in) or the
	// token has not answered C_SignInit or C_Sign. A PKCS#11 call cannot
	// be interrupted, so a call the token never answers keeps its session
	// (and a goroutine) until it does: the bound frees the caller, not the
	// session. Zero or negative means DefaultSignTimeout (10 s).
	// SignContext is bounded by its context instead.
	SignTimeout time.Duration

	// Locking chooses the mutexes the module guards its own state with;
	// the zero value is LockingSpin. It applies when this open loads the
	// module: a module already loaded for the path is shared as it is.
	Locking Locking

	// faults gives the Store's pool the fault injection of tests
	// (Store.Hang and Store.Gate in export_cgo_test.go); set by tests
	// only, through WithFaults.
	faults bool
}

// Locking says which mutexes a module uses for its own thread safety: the
// ones C_Initialize hands it, or the operating system's.
type Locking int

const (
	// LockingSpin, the default, passes signerkit's mutexes to C_Initialize
	// (CreateMutex, DestroyMutex, LockMutex, UnlockMutex, with
	// CKF_OS_LOCKING_OK also set, so the module may choose). They spin for
	// a few microseconds before sleeping in the kernel. Software tokens
	// hold process-wide locks for less than that many times a sign —
	// SoftHSM2 takes one around every buffer it allocates or frees — and a
	// pthread mutex puts the waiter to sleep and wakes it with two system
	// calls each time, which is what keeps two threads from signing twice
	// as fast. Modules that refuse the mutexes (CKR_CANT_LOCK,
	// CKR_ARGUMENTS_BAD) are initialized as LockingOS does. It needs Linux;
	// elsewhere it is LockingOS.
	LockingSpin Locking = iota
	// LockingOS passes only CKF_OS_LOCKING_OK, as miekg/pkcs11's
	// Initialize does: the module uses the operating system's mutexes.
	LockingOS
)

// String returns "spin" or "os".
func (l Locking) String() string {
	switch l {
	case LockingSpin:
		return "spin"
	case LockingOS:
		return "os"
	}
	return fmt.Sprintf("Locking(%d)", int(l))
}

func (c Config) signTimeout() time.Duration {
	if c.SignTimeout <= 0 {
		return DefaultSignTimeout
	}
	return c.SignTimeout
}

func (c Config) poolSize() int {
	if c.PoolSize > 0 {
		return c.PoolSize
	}
	return DefaultPoolSize
}

// KeySpec says what key Store.Generate makes.
type KeySpec struct {
	// Algorithm is the key's algorithm: signer.Ed25519,
	// signer.ECDSAP256, signer.ECDSAP384, signer.RSAPKCS1v15 or
	// signer.RSAPSS.
	Algorithm signer.Algorithm
	// Label is the keys' CKA_LABEL; it is required and must not be used by
	// another key on the token.
	Label string
	// ID is the keys' CKA_ID; nil means 8 random bytes.
	ID []byte
	// RSABits is the modulus size of an RSA key, 2048 to 4096; 0 means
	// 2048.
	RSABits int
	// Exportable makes the private key CKA_EXTRACTABLE: still sensitive,
	// so it leaves the token only encrypted under a wrap key
	// (ExportWrapped). Without it the key never leaves the token.
	Exportable bool
}
