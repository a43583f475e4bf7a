package threshold

import (
	"encoding/binary"
	"fmt"

	"github.com/signerkit/signerkit/threshold/dkls23"
)

// The DKLS23 requests travel in the same frames as FROST's (see wire.go),
// with types of their own. Each names a presignature by a 16-byte id the
// coordinator draws at random; the DKLS23 messages inside are package
// dkls23's, whose decoders check their exact lengths.
//
//	dkls presign  id (16) from (1) coordinator's round-1 message
//	              → dkls presigned: n (4) party's round-1 message (n bytes) ‖ its round-2 message
//	dkls finish   id (16) coordinator's round-2 message → dkls finished: empty
//	dkls sign     id (16) hash (32)                     → dkls share: the party's SignShare
//
// from is the coordinator's share's index; the signing set is it and the
// party.
const (
	typeDKLSPresign   byte = 16
	typeDKLSPresigned byte = 17
	typeDKLSFinish    byte = 18
	typeDKLSFinished  byte = 19
	typeDKLSSign      byte = 20
	typeDKLSShare     byte = 21
)

// dklsIDSize is the size of a presignature's id.
const dklsIDSize = 16

// maxDKLSMessage bounds a DKLS23 message inside a frame: a presign
// round-2 message is about 40 KB.
const maxDKLSMessage = 64 << 10

type dklsID [dklsIDSize]byte

// dklsSID is the dkls23 session id of presignature id: both sides derive
// it, so a party never runs two sessions under one.
func dklsSID(id dklsID) []byte { return append([]byte("signerkit dkls23 presign "), id[:]...) }

// parseDKLSRequest splits a request body into its id and the rest, which
// must be want bytes long (want < 0: 1 to maxDKLSMessage bytes).
func parseDKLSRequest(b []byte, want int) (dklsID, []byte, error) {
	var id dklsID
	if len(b) < dklsIDSize {
		return id, nil, &ProtocolError{fmt.Sprintf("DKLS23 request of %d bytes", len(b))}
	}
	copy(id[:], b)
	rest := b[dklsIDSize:]
	if want >= 0 && len(rest) != want || want < 0 && (len(rest) == 0 || len(rest) > maxDKLSMessage) {
		return id, nil, &ProtocolError{fmt.Sprintf("DKLS23 request of %d bytes", len(b))}
	}
	return id, rest, nil
}

// parseDKLSPresign reads a presign request: the id, the coordinator's
// index and its round-1 message.
func parseDKLSPresign(b []byte) (dklsID, int, []byte, error) {
	id, rest, err := parseDKLSRequest(b, -1)
	if err != nil {
		return id, 0, nil, err
	}
	from := int(rest[0])
	if from < 1 || from > dkls23.MaxParties || len(rest) < 2 {
		return id, 0, nil, &ProtocolError{fmt.Sprintf("DKLS23 presign request from party %d", from)}
	}
	return id, from, rest[1:], nil
}

func encodeDKLSPresigned(msg1, msg2 []byte) []byte {
	b := binary.BigEndian.AppendUint32(make([]byte, 0, 4+len(msg1)+len(msg2)), uint32(len(msg1)))
	return append(append(b, msg1...), msg2...)
}

// parseDKLSPresigned splits a presigned answer into the party's round-1
// and round-2 messages.
func parseDKLSPresigned(b []byte) (msg1, msg2 []byte, err error) {
	if len(b) < 4 {
		return nil, nil, &ProtocolError{"DKLS23 presigned answer too short"}
	}
	n := binary.BigEndian.Uint32(b)
	if n == 0 || n > maxDKLSMessage || uint64(n) >= uint64(len(b)-4) || len(b)-4-int(n) > maxDKLSMessage {
		return nil, nil, &ProtocolError{fmt.Sprintf("DKLS23 presigned answer of %d bytes with a %d-byte first message", len(b), n)}
	}
	return b[4 : 4+n], b[4+n:], nil
}
