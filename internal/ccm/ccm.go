// Package ccm is AES-CCM (RFC 3610, NIST SP 800-38C) with a 13-byte nonce
// and a 16-byte tag, the parameters of a YubiHSM 2's wrap keys, and no
// associated data: what the simulated device seals objects with under
// wrap. The standard library has no CCM.
package ccm

import (
	"crypto/cipher"
	"crypto/subtle"
	"errors"
)

// NonceSize and TagSize are the sizes this package seals with.
const (
	NonceSize = 13
	TagSize   = 16
	// MaxPlaintext is the longest message a 13-byte nonce leaves room
	// for: the length field is 15-13 = 2 bytes.
	MaxPlaintext = 1<<16 - 1
)

// ErrOpen is what Open returns for a ciphertext that does not
// authenticate.
var ErrOpen = errors.New("ccm: message authentication failed")

// Seal encrypts and authenticates plaintext under block (AES) and nonce,
// and returns ciphertext ‖ tag. It panics on a nonce of the wrong size or
// a plaintext longer than MaxPlaintext, or a block size other than 16.
func Seal(block cipher.Block, nonce, plaintext []byte) []byte {
	check(block, nonce, len(plaintext))
	tag := mac(block, nonce, plaintext)
	out := make([]byte, len(plaintext)+TagSize)
	ctr(block, nonce, out[:len(plaintext)], plaintext)
	s0 := counterBlock(nonce, 0)
	block.Encrypt(s0[:], s0[:])
	subtle.XORBytes(out[len(plaintext):], tag[:], s0[:])
	return out
}

// Open checks and decrypts ciphertext ‖ tag sealed under block and nonce.
// A wrong nonce size or a message shorter than a tag fails with ErrOpen,
// as does any tampering.
func Open(block cipher.Block, nonce, sealed []byte) ([]byte, error) {
	if block.BlockSize() != 16 || len(nonce) != NonceSize || len(sealed) < TagSize || len(sealed)-TagSize > MaxPlaintext {
		return nil, ErrOpen
	}
	n := len(sealed) - TagSize
	plain := make([]byte, n)
	ctr(block, nonce, plain, sealed[:n])
	tag := mac(block, nonce, plain)
	s0 := counterBlock(nonce, 0)
	block.Encrypt(s0[:], s0[:])
	subtle.XORBytes(tag[:], tag[:], s0[:])
	if subtle.ConstantTimeCompare(tag[:], sealed[n:]) != 1 {
		clear(plain)
		return nil, ErrOpen
	}
	return plain, nil
}

func check(block cipher.Block, nonce []byte, n int) {
	if block.BlockSize() != 16 || len(nonce) != NonceSize || n > MaxPlaintext {
		panic("ccm: bad block size, nonce size or plaintext length")
	}
}

// counterBlock is A_i of RFC 3610: flags L-1 = 1, the nonce, the counter.
func counterBlock(nonce []byte, i uint16) [16]byte {
	var a [16]byte
	a[0] = 1 // L' = L-1, L = 2
	copy(a[1:], nonce)
	a[14], a[15] = byte(i>>8), byte(i)
	return a
}

// ctr XORs src with the key stream S_1, S_2, … into dst.
func ctr(block cipher.Block, nonce, dst, src []byte) {
	var ks [16]byte
	for i := 0; i*16 < len(src); i++ {
		a := counterBlock(nonce, uint16(i+1))
		block.Encrypt(ks[:], a[:])
		end := min(len(src), (i+1)*16)
		subtle.XORBytes(dst[i*16:end], src[i*16:end], ks[:])
	}
}

// mac is the CBC-MAC T of RFC 3610 over B_0 and the message, with no
// associated data.
func mac(block cipher.Block, nonce, msg []byte) [16]byte {
	var x [16]byte
	// B_0: flags = 8*M' + L' with M' = (M-2)/2 = 7, L' = 1; no Adata bit.
	x[0] = 8*((TagSize-2)/2) + 1
	copy(x[1:], nonce)
	x[14], x[15] = byte(len(msg)>>8), byte(len(msg))
	block.Encrypt(x[:], x[:])
	for i := 0; i < len(msg); i += 16 {
		var b [16]byte
		copy(b[:], msg[i:min(len(msg), i+16)])
		subtle.XORBytes(x[:], x[:], b[:])
		block.Encrypt(x[:], x[:])
	}
	return x
}
