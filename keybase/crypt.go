package keybase

import (
	"context"
	"crypto"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"strconv"
	"strings"

	"golang.org/x/crypto/nacl/secretbox"

	"github.com/signerkit/signerkit/internal/bcryptsalt"
	"github.com/signerkit/signerkit/signer"
)

// DefaultCost is the bcrypt cost gnokey uses, and the only one it reads.
const DefaultCost = 12

// MinCost and MaxCost bound the bcrypt costs this package writes and
// reads. bcrypt itself goes to 31, but each step doubles the work: cost 20
// is 256 times cost 12, about a minute per unlock on a 2-core VM, and a
// file whose cost header claims 31 would take weeks to open. Such a file is
// refused as ArmorBadCost at once instead, with or without a deadline.
const (
	MinCost = bcryptsalt.MinCost
	MaxCost = 20
)

const (
	saltSize  = bcryptsalt.SaltSize
	nonceSize = 24
	// costHeader is this package's own header, written only for a cost
	// other than DefaultCost: gnokey writes none and always uses 12, and it
	// ignores headers it does not know.
	costHeader = "cost"
)

// PassphraseError is a passphrase that does not open a key: the wrong
// one, or (XSalsa20-Poly1305 cannot tell them apart) a ciphertext altered
// after it was written. It unwraps to signer.ErrWrongPassphrase. Every
// path that decrypts a key returns one for a wrong passphrase, reachable
// by errors.As: Open, Store.OpenKey, Store.ImportArmor,
// Store.ChangePassphrase (the old passphrase), DecryptArmor, OpenArmor,
// and each sign of a PerSign Signer. The passphrase is never part of it.
type PassphraseError struct {
	// Label is the key's name in its store; empty for armor opened
	// outside one (DecryptArmor, OpenArmor). For Store.ImportArmor it is
	// the label the key was to be imported under.
	Label string
	// Unencrypted is set when the key is stored in the clear, which only
	// an empty passphrase opens.
	Unencrypted bool
}

// Error names the key, when known, never the passphrase.
func (e *PassphraseError) Error() string {
	var b strings.Builder
	b.WriteString("keybase: ")
	if e.Label != "" {
		fmt.Fprintf(&b, "key %q: ", e.Label)
	}
	if e.Unencrypted {
		b.WriteString("the key is stored unencrypted and opens only with an empty passphrase: ")
	}
	b.WriteString(signer.ErrWrongPassphrase.Error())
	return b.String()
}

// Unwrap returns signer.ErrWrongPassphrase.
func (e *PassphraseError) Unwrap() error { return signer.ErrWrongPassphrase }

// sealedKey is a private key block as read: encrypted, or in the clear as
// gnokey writes it for an empty passphrase.
type sealedKey struct {
	plaintext bool
	salt      []byte
	cost      int
	data      []byte   // nonce ‖ secretbox, or the amino key bytes
	headers   []header // as read, in the order read
}

// wipe clears what holds the key in the clear: the data of an unencrypted
// key. An encrypted key holds no secret.
func (s *sealedKey) wipe() {
	if s != nil && s.plaintext {
		clear(s.data)
	}
}

// armor returns the block armored again as gnokey writes it (headers in
// the order read), not the bytes as read: the reader accepts white space
// around lines that gnokey's reader refuses, and what Export hands on must
// import into gnokey. For an unencrypted key it holds the key, in base64.
func (s *sealedKey) armor() []byte {
	return encodeBlock(block{Type: blockPrivate, Headers: s.headers, Data: s.data})
}

// parseSealed checks a private key block's type and headers, without
// deriving any key.
func parseSealed(b block) (*sealedKey, error) {
	if b.Type != blockPrivate {
		return nil, armorErr(ArmorBlockType, b.line, quoted(b.Type)+", want "+strconv.Quote(blockPrivate))
	}
	s := &sealedKey{data: b.Data, headers: b.Headers, cost: DefaultCost}
	if len(b.Headers) == 0 {
		s.plaintext = true
		return s, nil
	}
	for _, h := range b.Headers {
		switch h.Key {
		case "kdf", "salt", costHeader:
		default:
			return nil, armorErr(ArmorUnknownHeader, b.line, quoted(h.Key))
		}
	}
	if kdf, _ := b.header("kdf"); kdf != "bcrypt" {
		return nil, armorErr(ArmorUnknownKDF, b.line, "kdf "+quoted(kdf)+`, want "bcrypt"`)
	}
	salt, _ := b.header("salt")
	raw, err := hex.DecodeString(salt)
	if err != nil || len(raw) != saltSize {
		return nil, armorErr(ArmorBadSalt, b.line, "want 32 hex digits")
	}
	s.salt = raw
	if c, ok := b.header(costHeader); ok {
		n, err := strconv.Atoi(c)
		if err != nil || n < MinCost || n > MaxCost || strconv.Itoa(n) != c {
			return nil, armorErr(ArmorBadCost, b.line, fmt.Sprintf("want %d to %d", MinCost, MaxCost))
		}
		s.cost = n
	}
	if len(s.data) <= nonceSize+secretbox.Overhead {
		return nil, armorErr(ArmorBadPayload, b.line, "ciphertext too short")
	}
	return s, nil
}

// boxKey derives the secretbox key from the passphrase: SHA-256 of the
// 60-byte bcrypt string.
func boxKey(ctx context.Context, pass, salt []byte, cost int) (*[32]byte, error) {
	bc, err := bcryptsalt.Hash(ctx, pass, salt, cost)
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return nil, fmt.Errorf("keybase: %w", ctxErr)
		}
		return nil, fmt.Errorf("keybase: bcrypt: %w", err)
	}
	k := sha256.Sum256(bc)
	clear(bc)
	return &k, nil
}

// open decrypts the key with pass. A wrong passphrase (or a ciphertext
// altered after it was written, which the cipher cannot tell apart) fails
// with a *PassphraseError.
func (s *sealedKey) open(ctx context.Context, pass []byte) (*privateKey, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("keybase: %w", err)
	}
	if s.plaintext {
		if len(pass) != 0 {
			return nil, &PassphraseError{Unencrypted: true}
		}
		return decodePrivate(s.data)
	}
	k, err := boxKey(ctx, pass, s.salt, s.cost)
	if err != nil {
		return nil, err
	}
	plain, ok := openBox(s.data, k)
	clear(k[:])
	if !ok && len(pass) == 0 {
		// Some gnokey versions encrypted keys with an empty passphrase
		// under SHA-256 of nothing, skipping bcrypt; try that too.
		legacy := sha256.Sum256(nil)
		plain, ok = openBox(s.data, &legacy)
	}
	if !ok {
		return nil, &PassphraseError{}
	}
	defer clear(plain)
	return decodePrivate(plain)
}

func openBox(data []byte, key *[32]byte) ([]byte, bool) {
	var nonce [nonceSize]byte
	copy(nonce[:], data)
	return secretbox.Open(nil, data[nonceSize:], &nonce, key)
}

// seal encrypts k under pass at cost, as gnokey does: a private key block
// with kdf and salt headers (and cost, if not DefaultCost), or for an
// empty passphrase the unencrypted block gnokey writes. rnd gives the salt
// and then the nonce.
func seal(ctx context.Context, k *privateKey, pass []byte, cost int, rnd io.Reader) ([]byte, error) {
	plain := k.amino()
	defer clear(plain)
	if len(pass) == 0 {
		return encodeBlock(block{Type: blockPrivate, Data: plain}), nil
	}
	if cost == 0 {
		cost = DefaultCost
	}
	if cost < MinCost || cost > MaxCost {
		return nil, fmt.Errorf("keybase: bcrypt cost %d, want %d to %d: %w", cost, MinCost, MaxCost, signer.ErrInvalidArgument)
	}
	salt := make([]byte, saltSize)
	var nonce [nonceSize]byte
	if _, err := io.ReadFull(rnd, salt); err != nil {
		return nil, fmt.Errorf("keybase: salt: %w", err)
	}
	if _, err := io.ReadFull(rnd, nonce[:]); err != nil {
		return nil, fmt.Errorf("keybase: nonce: %w", err)
	}
	key, err := boxKey(ctx, pass, salt, cost)
	if err != nil {
		return nil, err
	}
	data := secretbox.Seal(nonce[:], plain, &nonce, key)
	clear(key[:])
	headers := []header{{"kdf", "bcrypt"}, {"salt", fmt.Sprintf("%X", salt)}}
	if cost != DefaultCost {
		headers = append(headers, header{costHeader, strconv.Itoa(cost)})
	}
	return encodeBlock(block{Type: blockPrivate, Headers: headers, Data: data}), nil
}

// parsePrivateArmor reads armor that holds one private key block and
// nothing else.
func parsePrivateArmor(armor []byte) (*sealedKey, error) {
	l := &lines{data: armor}
	b, err := decodeBlock(l)
	if err != nil {
		return nil, err
	}
	return parseSealedEnd(l, b)
}

// parseSealedEnd parses b, the last block of l, wiping its data (an
// unencrypted key's bytes) when it is refused.
func parseSealedEnd(l *lines, b block) (*sealedKey, error) {
	err := checkEnd(l)
	var s *sealedKey
	if err == nil {
		s, err = parseSealed(b)
	}
	if err != nil {
		clear(b.Data)
		return nil, err
	}
	return s, nil
}

// EncryptArmor returns priv — an ed25519.PrivateKey, or an *ecdsa.PrivateKey
// on signer.Secp256k1() — encrypted under passphrase and armored as
// `gnokey export` writes it, with a fresh random salt and nonce. cost 0
// means DefaultCost, the only cost gnokey reads; other costs add a "cost"
// header that this package reads and gnokey ignores; a cost outside MinCost to MaxCost
// is refused with signer.ErrInvalidArgument. An empty passphrase
// gives the unencrypted armor gnokey writes for one.
func EncryptArmor(ctx context.Context, priv crypto.PrivateKey, passphrase []byte, cost int) ([]byte, error) {
	k, err := fromPrivate(priv)
	if err != nil {
		return nil, err
	}
	defer k.wipe()
	return seal(ctx, k, passphrase, cost, rand.Reader)
}

// DecryptArmor reads a private key armored by gnokey or EncryptArmor and
// decrypts it with passphrase. It returns an ed25519.PrivateKey or a
// secp256k1 *ecdsa.PrivateKey, which the caller should wipe when done.
// Errors: *ArmorError for armor that cannot be read, *KeyTypeError for a
// key of another type, *PassphraseError (signer.ErrWrongPassphrase) for the
// wrong passphrase.
func DecryptArmor(ctx context.Context, armor, passphrase []byte) (crypto.PrivateKey, error) {
	s, err := parsePrivateArmor(armor)
	if err != nil {
		return nil, err
	}
	defer s.wipe()
	k, err := s.open(ctx, passphrase)
	if err != nil {
		return nil, err
	}
	defer k.wipe()
	if k.alg == signer.Ed25519 {
		return k.ed25519(), nil
	}
	return k.k1.ToECDSA(), nil
}
