// Package migrate reads the double-sign state files of the signers a
// validator moves from, and turns each into the state a guard.Guard
// starts from, so that signerkit signs only what comes strictly after the
// last message the old signer signed.
//
// # Formats
//
// Parse detects the format from the file's content:
//
//   - CometBFT: FilePV's priv_validator_state.json, v0.34 and v0.38:
//     height a JSON string, round a number, step 1 proposal, 2 prevote,
//     3 precommit; the last sign bytes in hex and their signature in
//     base64.
//   - Gno: gno tm2's FilePV state (v1.7.1), which gnokms's state file
//     shares: the same fields in amino JSON, round a string too and the
//     sign bytes in base64.
//   - TMKMS: tmkms's consensus state: height and round strings, a
//     block_id, and its own step numbering, 0 proposal, 1 prevote, 2
//     precommit; no sign bytes.
//   - Horcrux: horcrux's <chain>_priv_validator_state.json, FilePV's
//     fields plus nonce_public (ephemeral_public in older versions); the
//     sign bytes in hex (before v3) or base64 (v3).
//
// State.Step is always in the guard's numbering (1 proposal, 2 prevote, 3
// precommit); State.FileStep is the number the file holds.
//
// # Resuming
//
// State.Resume gives the guard.State to import. With the last sign bytes
// and signature, it is that message itself, as FilePV holds it: a node
// that asks again for the same message gets the same signature, and one
// that asks for it with only a new timestamp gets the old signature and
// timestamp. Without them (tmkms, a hand-written or hand-reset file), a
// step-0 state stays where it is, and any other resumes at the next
// round of the same height: the guard can hold "signed up to this step"
// only with the message signed, so a prevote or proposal without its
// bytes costs the rest of that round, never a second signature.
//
// Every malformed input is an *Error wrapping ErrNotState; sign bytes of
// another chain, a *ChainError.
package migrate

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/signerkit/signerkit/guard"
	"github.com/signerkit/signerkit/signbytes"
)

// Format is the signer a state file comes from.
type Format uint8

// The formats Parse reads.
const (
	CometBFT Format = iota + 1
	Gno
	TMKMS
	Horcrux
)

// String names the format as the docs do.
func (f Format) String() string {
	switch f {
	case CometBFT:
		return "CometBFT FilePV"
	case Gno:
		return "gno FilePV"
	case TMKMS:
		return "tmkms"
	case Horcrux:
		return "horcrux"
	}
	return fmt.Sprintf("Format(%d)", uint8(f))
}

// MaxFileSize is the largest state file Parse reads; real ones are under
// 1 KiB.
const MaxFileSize = 64 << 10

// ErrNotState is wrapped by every error of a file that is not a state
// file Parse reads.
var ErrNotState = errors.New("migrate: not a validator state file")

// Error says what is wrong in a state file. It wraps ErrNotState.
type Error struct {
	// Field is the JSON field at fault, or "" for the file as a whole.
	Field string
	// Reason says what is wrong, in words.
	Reason string
}

// Error returns "migrate: " followed by the field and reason.
func (e *Error) Error() string {
	if e.Field == "" {
		return "migrate: " + e.Reason
	}
	return fmt.Sprintf("migrate: field %q: %s", e.Field, e.Reason)
}

// Unwrap returns ErrNotState.
func (e *Error) Unwrap() error { return ErrNotState }

// ChainError is a state file whose last sign bytes are another chain's.
type ChainError struct {
	// File is the chain id in the file's sign bytes; Want the one asked.
	File, Want string
}

// Error names both chain ids.
func (e *ChainError) Error() string {
	return fmt.Sprintf("migrate: the state file's last message is for chain %q, not %q: it is another chain's state", e.File, e.Want)
}

// State is a state file's content.
type State struct {
	Format Format
	// Height, Round and Step are the last signed; Step in the guard's
	// numbering: 0 nothing, 1 proposal, 2 prevote, 3 precommit.
	Height, Round int64
	Step          int8
	// FileStep is the step as the file writes it (tmkms numbers from 0).
	FileStep int8
	// SignBytes and Signature are the last message signed and its
	// signature, nil when the file has none. Parse checks that the bytes
	// are a vote or proposal at Height, Round and Step.
	SignBytes, Signature []byte
	// BlockID is the hash of the block in tmkms's block_id, if any.
	BlockID []byte
}

// Parse reads a state file of any Format.
func Parse(b []byte) (State, error) {
	if len(b) > MaxFileSize {
		return State{}, &Error{Reason: fmt.Sprintf("%d bytes, more than a state file's %d", len(b), MaxFileSize)}
	}
	var m map[string]json.RawMessage
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	if err := d.Decode(&m); err != nil || m == nil {
		return State{}, &Error{Reason: fmt.Sprintf("not a JSON object: %v", err)}
	}
	if d.More() {
		return State{}, &Error{Reason: "data after the JSON object"}
	}
	for _, k := range []string{"height", "round", "step"} {
		if _, ok := m[k]; !ok {
			return State{}, &Error{Field: k, Reason: "missing (a state file has height, round and step)"}
		}
	}
	s := State{Format: detect(m)}
	var err error
	if s.Height, err = intField(m, "height", math.MaxInt64); err != nil {
		return State{}, err
	}
	if s.Round, err = intField(m, "round", math.MaxInt32); err != nil {
		return State{}, err
	}
	step, err := intField(m, "step", 3)
	if err != nil {
		return State{}, err
	}
	s.FileStep, s.Step = int8(step), int8(step)
	if s.Format == TMKMS {
		if step > 2 {
			return State{}, &Error{Field: "step", Reason: fmt.Sprintf("%d: tmkms's steps are 0 proposal, 1 prevote, 2 precommit", step)}
		}
		s.Step++
		return s, s.tmkmsBlockID(m["block_id"])
	}
	return s, s.lastSign(m)
}

// detect tells the formats apart by their fields and encodings.
func detect(m map[string]json.RawMessage) Format {
	if _, ok := m["block_id"]; ok {
		return TMKMS
	}
	for _, k := range []string{"nonce_public", "ephemeral_public", "vote_ext_signature"} {
		if _, ok := m[k]; ok {
			return Horcrux
		}
	}
	if r := bytes.TrimSpace(m["round"]); len(r) > 0 && r[0] == '"' {
		return Gno // amino writes every int as a string; CometBFT's round is an int32, a number
	}
	return CometBFT
}

// intField reads a non-negative integer at most max, written as a JSON
// number or a decimal string.
func intField(m map[string]json.RawMessage, k string, max int64) (int64, error) {
	raw := bytes.TrimSpace(m[k])
	var s string
	if len(raw) > 0 && raw[0] == '"' {
		if err := json.Unmarshal(raw, &s); err != nil {
			return 0, &Error{Field: k, Reason: err.Error()}
		}
	} else {
		s = string(raw)
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, &Error{Field: k, Reason: fmt.Sprintf("%q is not an integer", s)}
	}
	if v < 0 || v > max {
		return 0, &Error{Field: k, Reason: fmt.Sprintf("%d is out of range 0..%d", v, max)}
	}
	return v, nil
}

// bytesField reads a JSON string field, or nil for null, "" or absent.
func bytesField(m map[string]json.RawMessage, k string) (string, error) {
	raw := bytes.TrimSpace(m[k])
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", &Error{Field: k, Reason: "not a string"}
	}
	return s, nil
}

// lastSign reads signbytes and signature and checks that they are the
// message at s's height, round and step.
func (s *State) lastSign(m map[string]json.RawMessage) error {
	sb, err := bytesField(m, "signbytes")
	if err != nil {
		return err
	}
	sig, err := bytesField(m, "signature")
	if err != nil {
		return err
	}
	if sb == "" {
		if sig != "" {
			return &Error{Field: "signature", Reason: "a signature without signbytes"}
		}
		return nil
	}
	if sig == "" {
		return &Error{Field: "signbytes", Reason: "signbytes without a signature"}
	}
	if s.Step == 0 {
		return &Error{Field: "signbytes", Reason: "signbytes at step 0, where nothing is signed"}
	}
	if s.Signature, err = base64.StdEncoding.DecodeString(sig); err != nil || len(s.Signature) == 0 || len(s.Signature) > guard.MaxSignatureLen {
		return &Error{Field: "signature", Reason: fmt.Sprintf("not a base64 signature of 1 to %d bytes", guard.MaxSignatureLen)}
	}
	// CometBFT and horcrux before v3 write hex; gno and horcrux v3
	// base64. A string can read as both: keep the one that is the
	// message at this height, round and step.
	var why error
	for _, dec := range []func(string) ([]byte, error){hex.DecodeString, base64.StdEncoding.DecodeString} {
		b, err := dec(sb)
		if err != nil {
			continue
		}
		if why = s.matches(b); why == nil {
			s.SignBytes = b
			return nil
		}
	}
	if why == nil {
		why = errors.New("neither hex nor base64")
	}
	return &Error{Field: "signbytes", Reason: why.Error()}
}

// matches checks that b are sign bytes of the vote or proposal at s's
// height, round and step.
func (s *State) matches(b []byte) error {
	if len(b) > guard.MaxSignBytes {
		return fmt.Errorf("%d bytes, more than %d", len(b), guard.MaxSignBytes)
	}
	msg, err := signbytes.Parse(b)
	if err != nil {
		return err
	}
	if msg.Step() == 0 || msg.Height != s.Height || msg.Round != s.Round || msg.Step() != s.Step {
		return fmt.Errorf("they are a %v, not the file's %d/%d/%d", msg, s.Height, s.Round, s.Step)
	}
	return nil
}

// tmkmsBlockID reads tmkms's block_id: null, or an object whose hash is
// hex (empty for no block).
func (s *State) tmkmsBlockID(raw json.RawMessage) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var id struct {
		Hash string `json:"hash"`
	}
	if err := json.Unmarshal(raw, &id); err != nil {
		return &Error{Field: "block_id", Reason: "not null or an object with a hash"}
	}
	h, err := hex.DecodeString(id.Hash)
	if err != nil || (len(h) != 0 && len(h) != 32) {
		return &Error{Field: "block_id", Reason: fmt.Sprintf("hash %q is not 32 bytes of hex", id.Hash)}
	}
	if len(h) > 0 {
		s.BlockID = h
	}
	return nil
}

// Resume returns the state to import for chainID (see the package doc):
// the file's last message when it has one, else the state just after its
// height, round and step that the guard can hold. exact is false when
// that state skips more than the file's own (the rest of a round).
func (s State) Resume(chainID string) (st guard.State, exact bool, err error) {
	st.ChainID = chainID
	if err := s.CheckChain(chainID); err != nil {
		return guard.State{}, false, err
	}
	if s.SignBytes != nil {
		st.Height, st.Round, st.Step = s.Height, s.Round, s.Step
		st.SignBytes, st.Signature = bytes.Clone(s.SignBytes), bytes.Clone(s.Signature)
		return st, true, nil
	}
	st.Height = s.Height
	switch {
	case s.Height == 0:
		// Nothing is ever signed at height 0: a fresh state.
		return st, true, nil
	case s.Step == 0:
		st.Round = s.Round
		return st, true, nil
	case s.Round >= math.MaxInt32:
		return guard.State{}, false, &Error{Field: "round", Reason: "no round after it"}
	}
	st.Round = s.Round + 1
	return st, s.Step == 3, nil
}

// CheckChain returns a *ChainError if the file's last message is another
// chain's than chainID. A file without sign bytes names no chain.
func (s State) CheckChain(chainID string) error {
	if s.SignBytes == nil {
		return nil
	}
	msg, err := signbytes.Parse(s.SignBytes)
	if err != nil {
		return &Error{Field: "signbytes", Reason: err.Error()}
	}
	if msg.ChainID != chainID {
		return &ChainError{File: msg.ChainID, Want: chainID}
	}
	return nil
}

// String is the state as "height/round/step (format)".
func (s State) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d/%d/%d", s.Height, s.Round, s.Step)
	if s.Format == TMKMS {
		fmt.Fprintf(&b, " (tmkms step %d)", s.FileStep)
	}
	return b.String()
}
