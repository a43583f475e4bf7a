// Package scp03 is the YubiHSM 2's flavour of GlobalPlatform SCP03
// (docs/protocols.md B.3, B.4) and its frame format (B.1): the PBKDF2
// authentication key, the SP 800-108 KDF over AES-CMAC, the cryptograms,
// the MAC chain, the counter IV and ISO/IEC 7816-4 padding. The simulated
// device in yubihsm/yubihsmsim is built on all of it; the yubihsm client,
// whose secure channel is yubihsm-go's, uses it for the authentication key
// and to check response frames before yubihsm-go parses them.
//
// It differs from GlobalPlatform SCP03 where the YubiHSM 2 does: responses
// are encrypted under the command's IV, and the R-MAC does not update the
// chain.
package scp03

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/binary"
	"errors"

	"golang.org/x/crypto/pbkdf2"
)

// Sizes of the protocol's fields, in bytes.
const (
	KeyLen        = 16
	ChallengeLen  = 8
	CryptogramLen = 8
	MACLen        = 8
	// MaxFrame is the device's message buffer (YH_MSG_BUF_SIZE) plus the
	// 3-byte header: the connector refuses longer bodies.
	MaxFrame = 3136 + 3
)

// Derivation constants of the KDF (B.4).
const (
	ConstCardCryptogram = 0x00
	ConstHostCryptogram = 0x01
	ConstSENC           = 0x04
	ConstSMAC           = 0x06
	ConstSRMAC          = 0x07
)

// AuthKey derives the long-term key pair of a password authentication key:
// PBKDF2-HMAC-SHA256(password, "Yubico", 10000, 32), split into K-ENC and
// K-MAC (B.3).
func AuthKey(password []byte) (enc, mac [KeyLen]byte) {
	k := pbkdf2.Key(password, []byte("Yubico"), 10000, 2*KeyLen, sha256.New)
	copy(enc[:], k[:KeyLen])
	copy(mac[:], k[KeyLen:])
	clear(k)
	return enc, mac
}

// CMAC returns AES-CMAC (RFC 4493) of msg under key.
func CMAC(key []byte, msg ...[]byte) [16]byte {
	b, err := aes.NewCipher(key)
	if err != nil {
		panic("scp03: " + err.Error()) // keys are always 16 bytes here
	}
	return cmacBlock(b, msg...)
}

func cmacBlock(b cipher.Block, parts ...[]byte) [16]byte {
	var k1, k2, l [16]byte
	b.Encrypt(l[:], l[:])
	shift := func(dst, src *[16]byte) {
		carry := src[0] >> 7
		for i := 0; i < 15; i++ {
			dst[i] = src[i]<<1 | src[i+1]>>7
		}
		dst[15] = src[15] << 1
		if carry != 0 {
			dst[15] ^= 0x87
		}
	}
	shift(&k1, &l)
	shift(&k2, &k1)
	var msg []byte
	for _, p := range parts {
		msg = append(msg, p...)
	}
	n := (len(msg) + 15) / 16
	complete := n > 0 && len(msg)%16 == 0
	if n == 0 {
		n = 1
	}
	var last [16]byte
	if complete {
		copy(last[:], msg[16*(n-1):])
		subtle.XORBytes(last[:], last[:], k1[:])
	} else {
		rest := msg[16*(n-1):]
		copy(last[:], rest)
		last[len(rest)] = 0x80
		subtle.XORBytes(last[:], last[:], k2[:])
	}
	var x [16]byte
	for i := 0; i < n-1; i++ {
		subtle.XORBytes(x[:], x[:], msg[16*i:16*i+16])
		b.Encrypt(x[:], x[:])
	}
	subtle.XORBytes(x[:], x[:], last[:])
	b.Encrypt(x[:], x[:])
	return x
}

// KDF derives L bits (64 or 128) from key for constant c and the two
// challenges (NIST SP 800-108 counter mode, PRF AES-CMAC, B.4).
func KDF(key []byte, c byte, bits uint16, host, card []byte) []byte {
	var in [32]byte
	in[11] = c
	binary.BigEndian.PutUint16(in[13:15], bits)
	in[15] = 0x01
	copy(in[16:24], host)
	copy(in[24:32], card)
	out := CMAC(key, in[:])
	return append([]byte(nil), out[:bits/8]...)
}

// SessionKeys are the keys of one session.
type SessionKeys struct {
	ENC, MAC, RMAC [KeyLen]byte
}

// DeriveSessionKeys derives S-ENC, S-MAC and S-RMAC from the long-term keys
// and the challenges.
func DeriveSessionKeys(encKey, macKey, host, card []byte) SessionKeys {
	var k SessionKeys
	copy(k.ENC[:], KDF(encKey, ConstSENC, 128, host, card))
	copy(k.MAC[:], KDF(macKey, ConstSMAC, 128, host, card))
	copy(k.RMAC[:], KDF(macKey, ConstSRMAC, 128, host, card))
	return k
}

// Cryptogram returns the card (ConstCardCryptogram) or host
// (ConstHostCryptogram) cryptogram.
func (k *SessionKeys) Cryptogram(c byte, host, card []byte) []byte {
	return KDF(k.MAC[:], c, 64, host, card)
}

// Wipe zeroes the keys.
func (k *SessionKeys) Wipe() { *k = SessionKeys{} }

// IV returns the IV of the message with the given counter:
// AES-ECB(S-ENC, 0×12 ‖ counter).
func IV(block cipher.Block, counter uint32) [16]byte {
	var iv [16]byte
	binary.BigEndian.PutUint32(iv[12:], counter)
	block.Encrypt(iv[:], iv[:])
	return iv
}

// Pad appends ISO/IEC 7816-4 padding (80 then 00s) up to a multiple of 16,
// always adding at least one byte.
func Pad(b []byte) []byte {
	n := 16 - len(b)%16
	out := make([]byte, len(b)+n)
	copy(out, b)
	out[len(b)] = 0x80
	return out
}

// ErrPadding reports plaintext whose padding is malformed.
var ErrPadding = errors.New("scp03: bad padding")

// Unpad removes ISO/IEC 7816-4 padding: trailing zeros and the 80 before
// them, which must be within the last block.
func Unpad(b []byte) ([]byte, error) {
	for i := len(b) - 1; i >= 0 && i >= len(b)-16; i-- {
		switch b[i] {
		case 0x00:
			continue
		case 0x80:
			return b[:i], nil
		}
		break
	}
	return nil, ErrPadding
}

// Frame is one message: CMD ‖ LEN(2) ‖ payload.
type Frame struct {
	Cmd     byte
	Payload []byte
}

// Errors of ParseFrame.
var (
	ErrShortFrame = errors.New("scp03: frame shorter than its 3-byte header")
	ErrFrameLen   = errors.New("scp03: frame length field does not match its payload")
	ErrLongFrame  = errors.New("scp03: frame longer than the device's buffer")
)

// ParseFrame splits b into its command byte and payload, checking that the
// length field matches exactly. The payload aliases b.
func ParseFrame(b []byte) (Frame, error) {
	if len(b) < 3 {
		return Frame{}, ErrShortFrame
	}
	if len(b) > MaxFrame {
		return Frame{}, ErrLongFrame
	}
	if int(binary.BigEndian.Uint16(b[1:3])) != len(b)-3 {
		return Frame{}, ErrFrameLen
	}
	return Frame{Cmd: b[0], Payload: b[3:]}, nil
}

// Bytes encodes the frame.
func (f Frame) Bytes() []byte {
	out := make([]byte, 3+len(f.Payload))
	out[0] = f.Cmd
	binary.BigEndian.PutUint16(out[1:3], uint16(len(f.Payload)))
	copy(out[3:], f.Payload)
	return out
}

// MAC computes the 16-byte CMAC of a session frame under key, over the chain
// and cmd ‖ LEN ‖ sid ‖ body, where LEN counts the sid, the body and the
// 8-byte MAC that follows (B.4).
func MAC(key []byte, chain []byte, cmd, sid byte, body []byte) [16]byte {
	var hdr [4]byte
	hdr[0] = cmd
	binary.BigEndian.PutUint16(hdr[1:3], uint16(1+len(body)+MACLen))
	hdr[3] = sid
	return CMAC(key, chain, hdr[:], body)
}

// Encrypt encrypts padded plaintext in place-sized output under key with iv
// (AES-128-CBC); len(padded) must be a multiple of 16.
func Encrypt(block cipher.Block, iv [16]byte, padded []byte) []byte {
	out := make([]byte, len(padded))
	cipher.NewCBCEncrypter(block, iv[:]).CryptBlocks(out, padded)
	return out
}

// ErrBlocks reports ciphertext that is not a whole number of blocks.
var ErrBlocks = errors.New("scp03: ciphertext is not a whole number of AES blocks")

// Decrypt decrypts ct (AES-128-CBC) under block with iv.
func Decrypt(block cipher.Block, iv [16]byte, ct []byte) ([]byte, error) {
	if len(ct) == 0 || len(ct)%16 != 0 {
		return nil, ErrBlocks
	}
	out := make([]byte, len(ct))
	cipher.NewCBCDecrypter(block, iv[:]).CryptBlocks(out, ct)
	return out, nil
}
