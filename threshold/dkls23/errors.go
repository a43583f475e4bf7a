package dkls23

import "fmt"

// AbortError is a protocol abort a party's own messages caused: a bad
// commitment or decommitment, a share inconsistent with its commitments, an
// oblivious-transfer message that fails its check, a multiplication whose
// outputs do not match the committed values. Party is the index (1 … n) of
// the party the protocol blames; 0 when no single party can be named (a
// signature whose shares do not combine, since the last round's shares
// cannot be checked one by one).
//
// A message from party j that does not decode is j's abort too: its Err
// is the *EncodingError, which errors.As finds through it.
type AbortError struct {
	Party  int
	Reason string
	Err    error
}

func (e *AbortError) Unwrap() error { return e.Err }

// malformed blames party for a message that did not decode.
func malformed(party int, err error) error {
	return &AbortError{Party: party, Reason: err.Error(), Err: err}
}

func (e *AbortError) Error() string {
	if e.Party == 0 {
		return "dkls23: protocol aborted: " + e.Reason
	}
	return fmt.Sprintf("dkls23: protocol aborted by party %d: %s", e.Party, e.Reason)
}

// EncodingError is a message that does not decode: wrong length, wrong
// kind, a point off the curve or a scalar out of range.
type EncodingError struct{ Reason string }

func (e *EncodingError) Error() string { return "dkls23: malformed message: " + e.Reason }

// UsageError is a call the protocol cannot serve: a wrong party set,
// messages missing or from the wrong party, a presignature used twice.
type UsageError struct{ Reason string }

func (e *UsageError) Error() string { return "dkls23: " + e.Reason }

// abort returns an *AbortError blaming party.
func abort(party int, format string, args ...any) error {
	return &AbortError{Party: party, Reason: fmt.Sprintf(format, args...)}
}
