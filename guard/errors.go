package guard

import (
	"errors"
	"fmt"
	"time"

	"github.com/signerkit/signerkit/signer"
)

// ErrNoState is wrapped by the error a sign or State returns for a chain
// that has no state file while Config.AutoInit is false. Init creates one.
var ErrNoState = errors.New("guard: no double-sign state for this chain (Init creates it)")

// DoubleSignError is a refused sign: the request is below the last
// height/round/step signed on its chain, or at the same one with different
// content. It wraps signer.ErrDoubleSign.
type DoubleSignError struct {
	ChainID string
	// Height, Round and Step are the request's.
	Height, Round int64
	Step          int8
	// LastHeight, LastRound and LastStep are the state's.
	LastHeight, LastRound int64
	LastStep              int8
	// Reason is "height regression", "round regression", "step
	// regression" or "conflicting data at the same height/round/step".
	Reason string
	// NeverSigned is true when the state was set by Init, Repair or an
	// Import without a signature (at LastHeight) and nothing has been
	// signed since, and the request is below that height. A request at
	// that height but below the state's round or step is a plain
	// regression.
	NeverSigned bool
}

// Error describes the refusal.
func (e *DoubleSignError) Error() string {
	if e.NeverSigned {
		return fmt.Sprintf("guard: chain %q: asked to sign %d/%d/%d, below height %d, where the state was initialised; "+
			"nothing has been signed yet, and nothing below %d will be: %v",
			e.ChainID, e.Height, e.Round, e.Step, e.LastHeight, e.LastHeight, signer.ErrDoubleSign)
	}
	return fmt.Sprintf("guard: chain %q: %s: asked to sign %d/%d/%d, last signed %d/%d/%d: %v",
		e.ChainID, e.Reason, e.Height, e.Round, e.Step, e.LastHeight, e.LastRound, e.LastStep, signer.ErrDoubleSign)
}

// Unwrap returns signer.ErrDoubleSign.
func (e *DoubleSignError) Unwrap() error { return signer.ErrDoubleSign }

// TimestampError is what SignContext and Sign return when a vote or
// proposal at an already signed height/round/step differs from the signed
// one only in its timestamp (a node that crashed after signing asks
// again). Signing the new bytes would be a double sign; the earlier
// signature is valid for the message rebuilt with Timestamp, which
// SignBytes hands back directly. It wraps signer.ErrDoubleSign.
type TimestampError struct {
	ChainID       string
	Height, Round int64
	Step          int8
	// Timestamp is the timestamp of the message signed earlier.
	Timestamp time.Time
	// SignBytes and Signature are the earlier message and its signature.
	SignBytes, Signature []byte
}

// Error describes the conflict.
func (e *TimestampError) Error() string {
	return fmt.Sprintf("guard: chain %q: %d/%d/%d was signed with timestamp %s; rebuild the message with it: %v",
		e.ChainID, e.Height, e.Round, e.Step, e.Timestamp.Format(time.RFC3339Nano), signer.ErrDoubleSign)
}

// Unwrap returns signer.ErrDoubleSign.
func (e *TimestampError) Unwrap() error { return signer.ErrDoubleSign }

// CorruptError says a state file is damaged, truncated or not a state
// file, and the Guard refuses to sign for its chain. That includes a file
// with one intact slot beside one damaged: the damaged slot may have held
// the newer state, whose signature was released, so the Guard does not
// fall back to the older one. The Guard never writes to such a file;
// Repair, given a height above anything the validator may have signed,
// keeps a copy of it and starts the chain again. Inspect tells what each
// slot holds. It wraps signer.ErrCorrupt.
type CorruptError struct {
	Path string
	// Slots are the slots (0, 1) that fail their checks; empty when the
	// file as a whole is wrong (its size).
	Slots  []int
	Reason string
}

// Error describes the damage.
func (e *CorruptError) Error() string {
	return fmt.Sprintf("guard: state file %s: %s: %v", e.Path, e.Reason, signer.ErrCorrupt)
}

// Unwrap returns signer.ErrCorrupt.
func (e *CorruptError) Unwrap() error { return signer.ErrCorrupt }

// withPath sets the Path of the *CorruptError that err is (decodeFile
// leaves it unset) and returns err.
func withPath(err error, path string) error {
	var ce *CorruptError
	if errors.As(err, &ce) {
		ce.Path = path
	}
	return err
}

// StorageError is a failure to read, write or sync a state file. When a
// write or sync fails, the signature being made is not released, and the
// chain refuses every later sign with the same error until the Guard is
// closed and opened again: after a failed sync, what reached the disk is
// unknown until the file is read back. Err is the underlying error
// (errors.Is(err, syscall.ENOSPC) and the like hold).
type StorageError struct {
	Path string
	Op   string // "open", "create", "read", "write" or "sync"
	Err  error
}

// Error describes the failure.
func (e *StorageError) Error() string {
	return fmt.Sprintf("guard: %s state file %s: %v", e.Op, e.Path, e.Err)
}

// Unwrap returns Err.
func (e *StorageError) Unwrap() error { return e.Err }
