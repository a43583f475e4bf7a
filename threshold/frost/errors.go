package frost

import (
	"errors"
	"fmt"

	"github.com/signerkit/signerkit/signer"
)

// EncodingError says a wire element (a commitment, a share, a DKG package,
// a key package) could not be decoded: wrong length, a scalar out of
// range, a point that is not canonical, is the identity or lies outside
// the prime-order subgroup. It wraps signer.ErrProtocol.
type EncodingError struct {
	What   string // "signing commitments", "signature share", …
	Reason string
}

// Error describes what was wrong.
func (e *EncodingError) Error() string {
	return fmt.Sprintf("frost: decoding %s: %s: %v", e.What, e.Reason, signer.ErrProtocol)
}

// Unwrap returns signer.ErrProtocol.
func (e *EncodingError) Unwrap() error { return signer.ErrProtocol }

func encodingError(what string, err error) error {
	return &EncodingError{What: what, Reason: err.Error()}
}

// ShareError identifies a participant whose signature share does not
// verify (verify_signature_share, RFC 9591 section 5.4), so that the
// caller can act on it. It wraps signer.ErrInvalidSignature.
type ShareError struct {
	ID Identifier
}

// Error names the participant.
func (e *ShareError) Error() string {
	return fmt.Sprintf("frost: participant %d sent an invalid signature share: %v", e.ID, signer.ErrInvalidSignature)
}

// Unwrap returns signer.ErrInvalidSignature.
func (e *ShareError) Unwrap() error { return signer.ErrInvalidSignature }

// DKGError identifies a participant that misbehaved in the distributed key
// generation: a proof of knowledge that does not verify in round 1, or a
// secret share that does not match its commitment in round 2. It wraps
// signer.ErrProtocol.
type DKGError struct {
	Culprit Identifier
	Round   int
	Reason  string
}

// Error names the participant and what it did.
func (e *DKGError) Error() string {
	return fmt.Sprintf("frost: DKG round %d: participant %d: %s: %v", e.Round, e.Culprit, e.Reason, signer.ErrProtocol)
}

// Unwrap returns signer.ErrProtocol.
func (e *DKGError) Unwrap() error { return signer.ErrProtocol }

// ErrNonceUsed is wrapped by the error of a sign whose nonces were already
// consumed, or are not known to the store.
var ErrNonceUsed = errors.New("frost: nonce already used or unknown")

func invalidArgument(format string, args ...any) error {
	return fmt.Errorf("frost: "+format+": %w", append(args, signer.ErrInvalidArgument)...)
}
