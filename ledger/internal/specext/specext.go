// Package specext is signerkit's extension of Speculos's APDU protocol,
// spoken only between ledgersim's client (ledgersim.SpeculosDialer, the
// ledgersim: URI scheme) and ledgersim's Speculos face; package ledger
// never links it. It carries what a TCP byte stream otherwise cannot: the
// caller's deadline to the simulator, and the modeled time of each
// exchange back to the caller's trace.
//
// Speculos frames each message as a 4-byte big-endian length and the
// bytes (docs/protocols.md A.10); an APDU is at most 260 bytes. An
// extension frame sets the length's top bit (Flag, which is
// ledger/internal/speculos's ExtensionFlag), a length no Speculos client
// or server ever sends, so the two can never be confused:
//
//	client → sim, before an APDU:  Flag|9,  KindTimeLeft, i64be(ns left; -1: no deadline)
//	sim → client, before its reply: Flag|n, KindModeled,  i64be(0), stages
//	sim → client, instead of it:    Flag|n, KindDeadline, i64be(exchange's modeled ns), stages
//
// stages is simtime.Encode's text (at most simtime.MaxHeaderLen bytes):
// the modeled stages of the exchange, or with KindDeadline those
// accounted before the deadline. The simulator sends a reply extension
// only for an APDU that a time-left frame preceded, so a client that
// sends none (any standard Speculos client) sees plain Speculos.
package specext

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/signerkit/signerkit/internal/simtime"
	"github.com/signerkit/signerkit/ledger/internal/speculos"
	"github.com/signerkit/signerkit/signer/signertrace"
)

// Flag marks an extension frame's length.
const Flag = speculos.ExtensionFlag

// The kinds of extension frame.
const (
	KindTimeLeft = 1
	KindModeled  = 2
	KindDeadline = 3
)

// MaxPayload bounds an extension frame's payload.
const MaxPayload = 9 + simtime.MaxHeaderLen

// TimeLeftSize is the payload size of a time-left frame.
const TimeLeftSize = 9

// AppendTimeLeft appends a time-left frame (header and payload) to b:
// left is the time the caller's deadline leaves, or negative for none.
func AppendTimeLeft(b []byte, left time.Duration, hasDeadline bool) []byte {
	if !hasDeadline {
		left = -1
	} else if left < 0 {
		left = 0
	}
	b = binary.BigEndian.AppendUint32(b, Flag|TimeLeftSize)
	b = append(b, KindTimeLeft)
	return binary.BigEndian.AppendUint64(b, uint64(left))
}

// ParseTimeLeft reads a time-left frame's payload.
func ParseTimeLeft(p []byte) (left time.Duration, hasDeadline bool, err error) {
	if len(p) != TimeLeftSize || p[0] != KindTimeLeft {
		return 0, false, errors.New("specext: not a time-left frame")
	}
	n := int64(binary.BigEndian.Uint64(p[1:]))
	if n < 0 {
		return 0, false, nil
	}
	return time.Duration(n), true, nil
}

// AppendReply appends a reply extension frame to b: KindModeled with the
// exchange's modeled stages, or (exceeded) KindDeadline with the
// exchange's full modeled time and the stages accounted before the
// deadline.
//
// Durations over simtime.MaxStageDuration (10 minutes), which
// ParseReply refuses, are sent as that: only a profile made up for a test
// models such times.
func AppendReply(b []byte, exceeded bool, modeled time.Duration, stages []signertrace.StageInfo) []byte {
	clamped := make([]signertrace.StageInfo, len(stages))
	for i, s := range stages {
		s.Duration = min(s.Duration, simtime.MaxStageDuration)
		clamped[i] = s
	}
	modeled = min(modeled, simtime.MaxStageDuration)
	text := simtime.Encode(clamped)
	kind := byte(KindModeled)
	if exceeded {
		kind = KindDeadline
	} else {
		modeled = 0
	}
	b = binary.BigEndian.AppendUint32(b, Flag|uint32(9+len(text)))
	b = append(b, kind)
	b = binary.BigEndian.AppendUint64(b, uint64(modeled))
	return append(b, text...)
}

// Reply is a reply extension frame, read.
type Reply struct {
	// Exceeded is set for KindDeadline: no APDU reply follows.
	Exceeded bool
	// Modeled is the exchange's full modeled time (KindDeadline only).
	Modeled time.Duration
	// Stages are the modeled stages the simulator accounted (or slept).
	Stages []signertrace.StageInfo
}

// ParseReply reads a reply extension frame's payload, refusing one beyond
// the bounds simtime.Decode enforces.
func ParseReply(p []byte) (Reply, error) {
	if len(p) < 9 || len(p) > MaxPayload || (p[0] != KindModeled && p[0] != KindDeadline) {
		return Reply{}, errors.New("specext: not a reply extension frame")
	}
	r := Reply{Exceeded: p[0] == KindDeadline}
	n := int64(binary.BigEndian.Uint64(p[1:9]))
	switch {
	case !r.Exceeded && n != 0, n < 0, time.Duration(n) > simtime.MaxStageDuration:
		return Reply{}, fmt.Errorf("specext: modeled time %dns out of range", n)
	}
	r.Modeled = time.Duration(n)
	stages, err := simtime.Decode(string(p[9:]))
	if err != nil {
		return Reply{}, fmt.Errorf("specext: %w", err)
	}
	r.Stages = stages
	return r, nil
}
