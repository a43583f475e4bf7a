package keyfmt

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/signerkit/signerkit/internal/bech32"
)

// Prefixes of gno's bech32 strings (tm2's crypto.Bech32PubKeyPrefix and
// crypto.Bech32AddrPrefix).
const (
	GnoPubKeyPrefix  = "gpub"
	GnoAddressPrefix = "g"
)

// Amino names of an Ed25519 public key: gno's (tm2 amino, in a binary Any
// and in JSON "@type") and CometBFT's (JSON "type").
const (
	GnoPubKeyType      = "/tm.PubKeyEd25519"
	CometBFTPubKeyType = "tendermint/PubKeyEd25519"
)

// ErrFormat is wrapped by every error of this package's parsers.
var ErrFormat = errors.New("keyfmt: not a key in a known format")

// ErrNotEd25519 is wrapped, beside ErrFormat, when the input is a
// well-formed key of another algorithm (a secp256k1 "gpub1…", say).
var ErrNotEd25519 = errors.New("not an Ed25519 key")

// Error is a parser's error: what was read (shortened, never a secret)
// and what was wrong with it.
type Error struct {
	Input  string // the input, or the file's path; shortened to 100 bytes
	Reason string
	Err    error // ErrNotEd25519, a JSON or bech32 error, or nil
}

func (e *Error) Error() string {
	return fmt.Sprintf("key %q: %s", e.Input, e.Reason)
}

// Unwrap returns ErrFormat and Err.
func (e *Error) Unwrap() []error {
	if e.Err == nil {
		return []error{ErrFormat}
	}
	return []error{ErrFormat, e.Err}
}

func newError(input, reason string, err error) *Error {
	if len(input) > 100 {
		input = input[:100] + "…"
	}
	return &Error{Input: input, Reason: reason, Err: err}
}

// gnoAminoPrefix is how tm2's amino.MarshalAny begins an Ed25519 public
// key: field 1 the type URL, field 2 the value, itself field 1 the 32
// bytes.
var gnoAminoPrefix = func() []byte {
	b := []byte{0x0a, byte(len(GnoPubKeyType))}
	b = append(b, GnoPubKeyType...)
	return append(b, 0x12, 2+ed25519.PublicKeySize, 0x0a, ed25519.PublicKeySize)
}()

// GnoAmino returns pub as tm2's PubKeyEd25519.Bytes: the amino binary
// Any that "gpub1…" strings encode.
func GnoAmino(pub ed25519.PublicKey) []byte {
	return append(bytes.Clone(gnoAminoPrefix), pub...)
}

// ParseGnoAmino reads what GnoAmino writes.
func ParseGnoAmino(b []byte) (ed25519.PublicKey, error) {
	if len(b) == len(gnoAminoPrefix)+ed25519.PublicKeySize && bytes.HasPrefix(b, gnoAminoPrefix) {
		return ed25519.PublicKey(bytes.Clone(b[len(gnoAminoPrefix):])), nil
	}
	input := hex.EncodeToString(b)
	if len(b) > 2 && b[0] == 0x0a && int(b[1]) <= len(b)-2 && b[1] > 0 {
		if t := string(b[2 : 2+int(b[1])]); t != GnoPubKeyType && strings.HasPrefix(t, "/") {
			return nil, newError(input, fmt.Sprintf("an amino %s, not a %s", printable(t), GnoPubKeyType), ErrNotEd25519)
		}
	}
	return nil, newError(input, fmt.Sprintf("not an amino %s (%d bytes)", GnoPubKeyType, len(b)), nil)
}

// printable quotes s if it has anything but printable ASCII.
func printable(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x21 || s[i] > 0x7e {
			return fmt.Sprintf("%q", s)
		}
	}
	return s
}

// GnoPubKey returns pub as gno shows and takes public keys, "gpub1…":
// tm2's crypto.PubKeyToBech32, the bech32 (prefix "gpub") of GnoAmino.
func GnoPubKey(pub ed25519.PublicKey) string {
	s, err := bech32.EncodeBytesLong(GnoPubKeyPrefix, GnoAmino(pub))
	if err != nil {
		panic(err) // a fixed prefix and length
	}
	return s
}

// GnoSecp256k1PubKey returns a secp256k1 public key (33 bytes,
// compressed) as gno shows it, "gpub1…": tm2's crypto.PubKeyToBech32 of a
// PubKeySecp256k1, the bech32 (prefix "gpub") of its amino Any
// ("/tm.PubKeySecp256k1", the 33 bytes as field 1). It returns "" for a
// key of another length.
func GnoSecp256k1PubKey(compressed []byte) string {
	if len(compressed) != 33 {
		return ""
	}
	b := []byte{0x0a, byte(len(gnoSecp256k1Type))}
	b = append(b, gnoSecp256k1Type...)
	b = append(b, 0x12, 2+33, 0x0a, 33)
	s, err := bech32.EncodeBytesLong(GnoPubKeyPrefix, append(b, compressed...))
	if err != nil {
		panic(err) // a fixed prefix and length
	}
	return s
}

// gnoSecp256k1Type is tm2's amino type URL of PubKeySecp256k1.
const gnoSecp256k1Type = "/tm.PubKeySecp256k1"

// ParseGnoPubKey reads a "gpub1…" string, as tm2's
// crypto.PubKeyFromBech32 does, and returns its Ed25519 key.
func ParseGnoPubKey(s string) (ed25519.PublicKey, error) {
	hrp, b, err := bech32.DecodeBytesLong(s)
	if err != nil {
		return nil, newError(s, "not a bech32 string: "+strings.TrimPrefix(err.Error(), "bech32: "), err)
	}
	if hrp != GnoPubKeyPrefix {
		return nil, newError(s, fmt.Sprintf("bech32 prefix %q, want %q", hrp, GnoPubKeyPrefix), nil)
	}
	pub, err := ParseGnoAmino(b)
	if err != nil {
		var e *Error
		if errors.As(err, &e) {
			e.Input = s
		}
		return nil, err
	}
	return pub, nil
}

// GnoAddress returns the gno address of pub, "g1…": the bech32 (prefix
// "g") of the first 20 bytes of its SHA-256.
func GnoAddress(pub ed25519.PublicKey) string {
	sum := sha256.Sum256(pub)
	s, err := bech32.EncodeBytes(GnoAddressPrefix, sum[:20])
	if err != nil {
		panic(err) // a fixed prefix and length
	}
	return s
}

// ParseGnoAddress returns the 20 bytes of a gno address, "g1…".
func ParseGnoAddress(s string) ([]byte, error) {
	hrp, b, err := bech32.DecodeBytes(s)
	if err != nil {
		return nil, newError(s, "not a bech32 string: "+strings.TrimPrefix(err.Error(), "bech32: "), err)
	}
	if hrp != GnoAddressPrefix || len(b) != 20 {
		return nil, newError(s, fmt.Sprintf("not a gno address (prefix %q, %d bytes; want %q, 20)", hrp, len(b), GnoAddressPrefix), nil)
	}
	return b, nil
}

// CometBFTAddress returns the address of pub as CometBFT shows it: the
// first 20 bytes of its SHA-256, in upper-case hex.
func CometBFTAddress(pub ed25519.PublicKey) string {
	sum := sha256.Sum256(pub)
	return strings.ToUpper(hex.EncodeToString(sum[:20]))
}

// ParsePublicKey reads an Ed25519 public key written as any of:
//
//	gpub1…                        gno's bech32 (ParseGnoPubKey)
//	ed25519:<64 hex digits>       as signerkit logs keys
//	ed25519:<base64>
//	<64 hex digits>               either case
//	<base64>                      standard, padded: as CometBFT's JSON shows keys
//
// Leading and trailing spaces are ignored. Anything else is an *Error
// wrapping ErrFormat that says what was wrong.
func ParsePublicKey(s string) (ed25519.PublicKey, error) {
	t := strings.TrimSpace(s)
	if strings.HasPrefix(strings.ToLower(t), GnoPubKeyPrefix+"1") {
		return ParseGnoPubKey(t)
	}
	body, hadPrefix := strings.CutPrefix(t, "ed25519:")
	if body == "" {
		return nil, newError(s, "empty", nil)
	}
	if _, err := ParseGnoAddress(t); err == nil {
		return nil, newError(s, "a gno address, not a public key (an address is a hash of the key): give its gpub1… or hex public key", nil)
	}
	hb, hexErr := hex.DecodeString(body)
	if hexErr == nil && len(hb) == ed25519.PublicKeySize {
		return hb, nil
	}
	bb, b64Err := base64.StdEncoding.DecodeString(body)
	if b64Err == nil && len(bb) == ed25519.PublicKeySize {
		return bb, nil
	}
	switch {
	case hexErr == nil && b64Err == nil:
		return nil, newError(s, fmt.Sprintf("%d hex digits, or base64 of %d bytes: an Ed25519 public key is 64 hex digits or base64 of 32 bytes", len(body), len(bb)), nil)
	case hexErr == nil:
		return nil, newError(s, fmt.Sprintf("%d hex digits: an Ed25519 public key is 64", len(body)), nil)
	case b64Err == nil:
		return nil, newError(s, fmt.Sprintf("base64 of %d bytes: an Ed25519 public key is 32", len(bb)), nil)
	}
	if !hadPrefix {
		if alg, _, ok := strings.Cut(t, ":"); ok && alg != "" && !strings.ContainsAny(alg, "/ ") {
			return nil, newError(s, fmt.Sprintf("algorithm %q: want ed25519:<hex|base64>, gpub1…, 64 hex digits or base64", alg), nil)
		}
	}
	return nil, newError(s, "neither gpub1…, nor 64 hex digits, nor base64 of 32 bytes (with or without ed25519:)", nil)
}
