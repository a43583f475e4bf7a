// Package bech32 encodes and decodes bech32 strings as BIP 173 defines
// them (the original checksum, not BIP 350's bech32m), as tm2 and gnokey
// write addresses ("g1…").
package bech32

import (
	"errors"
	"fmt"
	"strings"
)

const charset = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"

// MaxLength is the longest bech32 string BIP 173 allows.
const MaxLength = 90

// MaxLengthLong bounds the strings of EncodeBytesLong and DecodeBytesLong.
// tm2 decodes without BIP 173's limit (its public keys, "gpub1…", are 99
// characters for Ed25519); this bound only keeps garbled input cheap.
const MaxLengthLong = 1023

var charsetRev = func() (r [128]int8) {
	for i := range r {
		r[i] = -1
	}
	for i := 0; i < len(charset); i++ {
		r[charset[i]] = int8(i)
	}
	return r
}()

func polymod(values []byte) uint32 {
	gen := [5]uint32{0x3b6a57b2, 0x26508e6d, 0x1ea119fa, 0x3d4233dd, 0x2a1462b3}
	chk := uint32(1)
	for _, v := range values {
		b := chk >> 25
		chk = (chk&0x1ffffff)<<5 ^ uint32(v)
		for i := 0; i < 5; i++ {
			if (b>>i)&1 == 1 {
				chk ^= gen[i]
			}
		}
	}
	return chk
}

func hrpExpand(hrp string) []byte {
	out := make([]byte, 0, 2*len(hrp)+1)
	for i := 0; i < len(hrp); i++ {
		out = append(out, hrp[i]>>5)
	}
	out = append(out, 0)
	for i := 0; i < len(hrp); i++ {
		out = append(out, hrp[i]&31)
	}
	return out
}

func checksum(hrp string, data []byte) []byte {
	values := append(hrpExpand(hrp), data...)
	values = append(values, 0, 0, 0, 0, 0, 0)
	mod := polymod(values) ^ 1
	out := make([]byte, 6)
	for i := range out {
		out[i] = byte(mod>>(5*(5-i))) & 31
	}
	return out
}

// Encode returns the bech32 string of hrp and data, 5-bit groups (each
// below 32). hrp must be 1 to 83 characters of ASCII 33 to 126, not mixed
// case; the result is lower case.
func Encode(hrp string, data []byte) (string, error) {
	return encode(hrp, data, MaxLength)
}

func encode(hrp string, data []byte, maxLen int) (string, error) {
	if len(hrp) < 1 || len(hrp)+1+len(data)+6 > maxLen {
		return "", fmt.Errorf("bech32: length %d out of range", len(hrp)+1+len(data)+6)
	}
	if err := checkHRP(hrp); err != nil {
		return "", err
	}
	hrp = strings.ToLower(hrp)
	var sb strings.Builder
	sb.WriteString(hrp)
	sb.WriteByte('1')
	for _, d := range data {
		if d >= 32 {
			return "", errors.New("bech32: data value out of range")
		}
		sb.WriteByte(charset[d])
	}
	for _, d := range checksum(hrp, data) {
		sb.WriteByte(charset[d])
	}
	return sb.String(), nil
}

func checkHRP(hrp string) error {
	lower, upper := false, false
	for i := 0; i < len(hrp); i++ {
		c := hrp[i]
		if c < 33 || c > 126 {
			return fmt.Errorf("bech32: human-readable part character 0x%02x out of range", c)
		}
		lower = lower || ('a' <= c && c <= 'z')
		upper = upper || ('A' <= c && c <= 'Z')
	}
	if lower && upper {
		return errors.New("bech32: mixed case")
	}
	return nil
}

// Decode parses a bech32 string, returning its human-readable part (lower
// case) and its data as 5-bit groups, without the checksum.
func Decode(s string) (hrp string, data []byte, err error) {
	return decode(s, MaxLength)
}

func decode(s string, maxLen int) (hrp string, data []byte, err error) {
	if len(s) > maxLen {
		return "", nil, fmt.Errorf("bech32: length %d over %d", len(s), maxLen)
	}
	if err := checkHRP(s); err != nil { // every character, and mixed case
		return "", nil, err
	}
	s = strings.ToLower(s)
	sep := strings.LastIndexByte(s, '1')
	if sep < 1 {
		return "", nil, errors.New("bech32: no separator, or an empty human-readable part")
	}
	if sep+7 > len(s) {
		return "", nil, errors.New("bech32: checksum too short")
	}
	hrp = s[:sep]
	data = make([]byte, 0, len(s)-sep-1)
	for i := sep + 1; i < len(s); i++ {
		v := charsetRev[s[i]]
		if v < 0 {
			return "", nil, fmt.Errorf("bech32: invalid data character %q", s[i])
		}
		data = append(data, byte(v))
	}
	if polymod(append(hrpExpand(hrp), data...)) != 1 {
		return "", nil, errors.New("bech32: invalid checksum")
	}
	return hrp, data[:len(data)-6], nil
}

// ConvertBits regroups data from groups of from bits to groups of to bits
// (each at most 8). With pad, a last incomplete group is padded with
// zeros; without, leftover bits must be fewer than from and all zero.
func ConvertBits(data []byte, from, to uint, pad bool) ([]byte, error) {
	var acc, bits uint
	maxv := uint(1)<<to - 1
	out := make([]byte, 0, len(data)*int(from)/int(to)+1)
	for _, v := range data {
		if uint(v)>>from != 0 {
			return nil, errors.New("bech32: value out of range")
		}
		acc = acc<<from | uint(v)
		bits += from
		for bits >= to {
			bits -= to
			out = append(out, byte(acc>>bits&maxv))
		}
	}
	if pad {
		if bits > 0 {
			out = append(out, byte(acc<<(to-bits)&maxv))
		}
	} else if bits >= from || acc<<(to-bits)&maxv != 0 {
		return nil, errors.New("bech32: invalid padding")
	}
	return out, nil
}

// EncodeBytes returns the bech32 string of hrp and the bytes b, regrouped
// into 5-bit groups, as tm2's bech32.ConvertAndEncode does.
func EncodeBytes(hrp string, b []byte) (string, error) {
	return encodeBytes(hrp, b, MaxLength)
}

// EncodeBytesLong is EncodeBytes for strings up to MaxLengthLong, as tm2
// encodes public keys.
func EncodeBytesLong(hrp string, b []byte) (string, error) {
	return encodeBytes(hrp, b, MaxLengthLong)
}

func encodeBytes(hrp string, b []byte, maxLen int) (string, error) {
	data, err := ConvertBits(b, 8, 5, true)
	if err != nil {
		return "", err
	}
	return encode(hrp, data, maxLen)
}

// DecodeBytes parses a bech32 string whose data are bytes regrouped into
// 5-bit groups, as tm2's bech32.DecodeAndConvert does.
func DecodeBytes(s string) (hrp string, b []byte, err error) {
	return decodeBytes(s, MaxLength)
}

// DecodeBytesLong is DecodeBytes for strings up to MaxLengthLong, as tm2
// decodes public keys (bech32.DecodeNoLimit).
func DecodeBytesLong(s string) (hrp string, b []byte, err error) {
	return decodeBytes(s, MaxLengthLong)
}

func decodeBytes(s string, maxLen int) (hrp string, b []byte, err error) {
	hrp, data, err := decode(s, maxLen)
	if err != nil {
		return "", nil, err
	}
	b, err = ConvertBits(data, 5, 8, false)
	if err != nil {
		return "", nil, err
	}
	return hrp, b, nil
}
