// Package bcryptsalt is bcrypt (Provos and Mazières, 1999) with the salt
// given by the caller, which golang.org/x/crypto/bcrypt does not allow: the
// gnokey key-file format derives its encryption key from bcrypt of the
// passphrase under a salt stored in the file. It builds on the bcrypt key
// schedule in golang.org/x/crypto/blowfish and produces the standard
// 60-byte "$2a$" modular-crypt string, which bcrypt.CompareHashAndPassword
// accepts.
//
// As every bcrypt, it reads at most 72 bytes of the password (the
// password and its terminating NUL are cycled through the 18 words of the
// Blowfish P-array); longer passwords hash like their first 72 bytes.
package bcryptsalt

import (
	"context"
	"encoding/base64"
	"fmt"
	"strconv"

	//lint:ignore SA1019 bcrypt is built on the Blowfish key schedule; that is the point
	"golang.org/x/crypto/blowfish"
)

const (
	// SaltSize is the size of a bcrypt salt in bytes.
	SaltSize = 16
	// MinCost and MaxCost bound the cost (log2 of the number of rounds of
	// the expensive key schedule), as in golang.org/x/crypto/bcrypt.
	MinCost = 4
	MaxCost = 31
	// HashSize is the length of the string Hash returns.
	HashSize = 60
)

// encoding is bcrypt's base64: its own alphabet, no padding.
var encoding = base64.NewEncoding("./ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789").WithPadding(base64.NoPadding)

// magic is "OrpheanBeholderScryDoubt", the plaintext bcrypt encrypts.
var magic = [24]byte{'O', 'r', 'p', 'h', 'e', 'a', 'n', 'B', 'e', 'h', 'o', 'l', 'd', 'e', 'r', 'S', 'c', 'r', 'y', 'D', 'o', 'u', 'b', 't'}

// checkEvery is how many rounds of the key schedule run between two looks
// at the context: about a millisecond's worth on a current CPU.
const checkEvery = 16

// Hash returns the bcrypt string of password under salt (SaltSize bytes)
// at cost: "$2a$" ‖ two-digit cost ‖ "$" ‖ 22 characters of salt ‖ 31 of
// hash. It stops between rounds when ctx is done, returning ctx.Err().
// It does not keep password; its own copy is wiped before it returns.
func Hash(ctx context.Context, password, salt []byte, cost int) ([]byte, error) {
	if len(salt) != SaltSize {
		return nil, fmt.Errorf("bcrypt salt is %d bytes, want %d", len(salt), SaltSize)
	}
	if cost < MinCost || cost > MaxCost {
		return nil, fmt.Errorf("bcrypt cost %d out of range [%d, %d]", cost, MinCost, MaxCost)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	// The key is the password with its C string terminator, as every
	// bcrypt uses it; Blowfish reads only its first 72 bytes.
	key := make([]byte, len(password)+1)
	copy(key, password)
	defer clear(key)

	c, err := blowfish.NewSaltedCipher(key, salt)
	if err != nil {
		return nil, fmt.Errorf("bcrypt key schedule: %w", err)
	}
	defer func() { *c = blowfish.Cipher{} }()
	rounds := uint64(1) << uint(cost)
	for i := uint64(0); i < rounds; i++ {
		if i%checkEvery == 0 && i > 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		blowfish.ExpandKey(key, c)
		blowfish.ExpandKey(salt, c)
	}
	out := magic
	for i := 0; i < len(out); i += 8 {
		for range 64 {
			c.Encrypt(out[i:i+8], out[i:i+8])
		}
	}
	defer clear(out[:])

	h := make([]byte, 0, HashSize)
	h = append(h, "$2a$"...)
	if cost < 10 {
		h = append(h, '0')
	}
	h = strconv.AppendInt(h, int64(cost), 10)
	h = append(h, '$')
	h = encoding.AppendEncode(h, salt)
	// Only 23 of the 24 bytes are encoded, as in the original bcrypt.
	h = encoding.AppendEncode(h, out[:23])
	return h, nil
}
