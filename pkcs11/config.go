package pkcs11

import (
	"fmt"

	"github.com/signerkit/signerkit/signer"
)

// PINFunc returns the token's user PIN. It is called each time the pool
// must log in (when the token is opened, and again after the token forgot
// the login, e.g. when every session was closed), so the PIN need not stay
// in memory in between; the returned slice is wiped after use.
type PINFunc func() ([]byte, error)

// DefaultPoolSize is the number of sessions a token's pool keeps open at
// most when Config.PoolSize is 0.
const DefaultPoolSize = 4

// Config selects a module, a token in it and, for OpenKey, a key on it.
// A URI describes the same through (*URI).Config.
type Config struct {
	// Module is the path of the PKCS#11 module (a shared library such as
	// /usr/lib/softhsm/libsofthsm2.so). Required.
	Module string

	// The token is the one whose fields match all the non-empty selectors
	// below (token label, serial number, manufacturer, model) in the slot
	// SlotID, if set. With no selector the module must show exactly one
	// token.
	TokenLabel, TokenSerial, TokenManufacturer, TokenModel string
	SlotID                                                 *uint

	// KeyLabel (CKA_LABEL) and KeyID (CKA_ID) name the private key for
	// OpenKey; at least one is required, and both must match when both
	// are set.
	KeyLabel string
	KeyID    []byte
	// Algorithm is the algorithm the key signs with; 0 means the one its
	// type implies (RSA keys: signer.RSAPKCS1v15). Set signer.RSAPSS to
	// sign with PSS.
	Algorithm signer.Algorithm

	// PIN returns the user PIN; nil means no login, for tokens whose keys
	// are usable in a public session.
	PIN PINFunc

	// PoolSize is the most sessions the token's pool opens at once; 0 (or
	// less) means DefaultPoolSize. Signs beyond it wait for a session.
	PoolSize int

	// Locking chooses the mutexes the module guards its own state with.
	// It applies when this Open loads the module: a module already loaded
	// for the path is shared as it is.
	Locking Locking
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

func (c Config) poolSize() int {
	if c.PoolSize > 0 {
		return c.PoolSize
	}
	return DefaultPoolSize
}

func (c Config) keyRef() signer.KeyRef {
	return signer.KeyRef{Label: c.KeyLabel, ID: hexID(c.KeyID), Algorithm: c.Algorithm}
}

// KeySpec says what key Generate makes.
type KeySpec struct {
	Algorithm signer.Algorithm
	// Label is the keys' CKA_LABEL; required, and not used by another key.
	Label string
	// ID is the keys' CKA_ID; nil means 8 random bytes.
	ID []byte
	// RSABits is the modulus size of an RSA key, 2048 to 4096; 0 means
	// 2048.
	RSABits int
}
