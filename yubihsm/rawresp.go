package yubihsm

import (
	"crypto/aes"
	"crypto/cipher"
	"fmt"
	"strings"

	"github.com/signerkit/signerkit/internal/scp03"
)

// Answers yubihsm-go cannot parse. yubihsm-go parses the answers of the
// commands it knows and drops the data of the others (Sign PSS among
// them) with "response type unknown", after checking their R-MAC and
// counting them. For those, the session decrypts the answer itself, from
// the frame the connector returned and its own copy of S-ENC.

// rawResponse is the data of an answer yubihsm-go could not parse.
type rawResponse struct{ data []byte }

// sessionCipher derives a session's S-ENC from the authentication key
// (K-ENC ‖ K-MAC) and the two challenges, as the device does, and wipes
// the derived keys.
func sessionCipher(authKey, host, card []byte) cipher.Block {
	keys := scp03.DeriveSessionKeys(authKey[:scp03.KeyLen], authKey[scp03.KeyLen:2*scp03.KeyLen], host, card)
	defer keys.Wipe()
	b, _ := aes.NewCipher(keys.ENC[:]) // 16 bytes: never fails
	return b
}

// unknownResponse reports whether err is yubihsm-go's refusal of an
// answer it has no parser for.
func unknownResponse(err error) bool {
	return err != nil && strings.Contains(err.Error(), "response type unknown")
}

// readRaw decrypts the last answer on s, to the command cmd sent with the
// counter counter, and returns its data.
func (s *session) readRaw(cmd byte, counter uint32) (*rawResponse, error) {
	if s.block == nil {
		return nil, &protocolError{"no session key to read an unparsed answer"}
	}
	outer, err := scp03.ParseFrame(s.conn.last)
	if err != nil || len(outer.Payload) < 1+16+scp03.MACLen {
		return nil, &protocolError{"an unparsed answer too short for a session message"}
	}
	ct := outer.Payload[1 : len(outer.Payload)-scp03.MACLen]
	plain, err := scp03.Decrypt(s.block, scp03.IV(s.block, counter), ct)
	if err == nil {
		plain, err = scp03.Unpad(plain)
	}
	if err != nil {
		return nil, &protocolError{"an unparsed answer: " + err.Error()}
	}
	inner, err := scp03.ParseFrame(plain)
	if err != nil || inner.Cmd != cmd|0x80 {
		return nil, &protocolError{fmt.Sprintf("an answer to command %#x that is not its own: %x", cmd, plain[:min(len(plain), 3)])}
	}
	return &rawResponse{data: append([]byte(nil), inner.Payload...)}, nil
}
