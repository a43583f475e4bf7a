package threshold

import (
	"bytes"
	"crypto/rand"
	"encoding/pem"
	"fmt"

	"golang.org/x/crypto/chacha20poly1305"
	"golang.org/x/crypto/scrypt"

	"github.com/signerkit/signerkit/signer"
)

// pemEncrypted is the PEM block type of an exported (encrypted) share.
const pemEncrypted = "SIGNERKIT ENCRYPTED FROST SHARE"

// Exported share layout: version, scrypt log2(N), r, p, salt, nonce,
// then the sealed share file. The header is the AEAD's additional data.
const (
	exportVersion   = 1
	exportSaltSize  = 16
	exportHeaderLen = 4 + exportSaltSize + chacha20poly1305.NonceSizeX
	// DefaultExportLogN is scrypt's log2(N) for ExportShare: 2^17 with
	// r = 8 takes 128 MiB and about a second.
	DefaultExportLogN = 17
	minExportLogN     = 10
	maxExportLogN     = 22
)

// ExportShare encrypts a share file (MarshalShare's output) under a
// passphrase, for a backup: the key is scrypt(passphrase, salt, 2^logN,
// 8, 1) and the cipher XChaCha20-Poly1305; logN 0 means
// DefaultExportLogN. The result is one PEM block and holds no secret in
// the clear; ImportShare reverses it.
func ExportShare(share, passphrase []byte, logN int) ([]byte, error) {
	if logN == 0 {
		logN = DefaultExportLogN
	}
	if logN < minExportLogN || logN > maxExportLogN {
		return nil, fmt.Errorf("threshold: scrypt log2(N) %d: want %d to %d: %w", logN, minExportLogN, maxExportLogN, signer.ErrInvalidArgument)
	}
	if len(passphrase) == 0 {
		return nil, fmt.Errorf("threshold: an empty passphrase: %w", signer.ErrInvalidArgument)
	}
	if err := checkAnyShare(share); err != nil {
		return nil, &ShareFileError{Err: err}
	}
	hdr := make([]byte, exportHeaderLen)
	hdr[0], hdr[1], hdr[2], hdr[3] = exportVersion, byte(logN), 8, 1
	if _, err := rand.Read(hdr[4:]); err != nil {
		return nil, err
	}
	aead, err := exportAEAD(passphrase, hdr)
	if err != nil {
		return nil, err
	}
	body := aead.Seal(bytes.Clone(hdr), hdr[4+exportSaltSize:], share, hdr)
	return pem.EncodeToMemory(&pem.Block{Type: pemEncrypted, Bytes: body}), nil
}

func exportAEAD(passphrase, hdr []byte) (interface {
	Seal(dst, nonce, plaintext, additionalData []byte) []byte
	Open(dst, nonce, ciphertext, additionalData []byte) ([]byte, error)
	Overhead() int
}, error) {
	key, err := scrypt.Key(passphrase, hdr[4:4+exportSaltSize], 1<<hdr[1], int(hdr[2]), int(hdr[3]), chacha20poly1305.KeySize)
	if err != nil {
		return nil, fmt.Errorf("threshold: scrypt: %v: %w", err, signer.ErrInvalidArgument)
	}
	defer clear(key)
	return chacha20poly1305.NewX(key)
}

// ImportShare decrypts an exported share and returns the share file,
// checked as ParseShare checks it. A wrong passphrase gives an error
// wrapping signer.ErrWrongPassphrase; data that is not an exported share,
// or damaged, one wrapping signer.ErrCorrupt (a damaged ciphertext cannot
// be told from a wrong passphrase, and reads as one). The caller wipes the
// result.
func ImportShare(data, passphrase []byte) ([]byte, error) {
	b, rest := pem.Decode(data)
	switch {
	case len(data) > maxShareFile:
		return nil, &ShareFileError{Err: corruptShare("more than %d bytes", maxShareFile)}
	case b == nil || b.Type != pemEncrypted || len(bytes.TrimSpace(rest)) > 0:
		return nil, &ShareFileError{Err: corruptShare("not one %s PEM block", pemEncrypted)}
	case len(b.Bytes) < exportHeaderLen+chacha20poly1305.Overhead:
		return nil, &ShareFileError{Err: corruptShare("%d bytes: too short", len(b.Bytes))}
	}
	hdr := b.Bytes[:exportHeaderLen]
	if hdr[0] != exportVersion || hdr[1] < minExportLogN || hdr[1] > maxExportLogN || hdr[2] != 8 || hdr[3] != 1 {
		return nil, &ShareFileError{Err: corruptShare("unknown version %d or scrypt parameters (2^%d, %d, %d)", hdr[0], hdr[1], hdr[2], hdr[3])}
	}
	aead, err := exportAEAD(passphrase, hdr)
	if err != nil {
		return nil, err
	}
	share, err := aead.Open(nil, hdr[4+exportSaltSize:], b.Bytes[exportHeaderLen:], hdr)
	if err != nil {
		return nil, fmt.Errorf("threshold: cannot decrypt the exported share (a wrong passphrase, or a damaged file): %w", signer.ErrWrongPassphrase)
	}
	if err := checkAnyShare(share); err != nil {
		clear(share)
		return nil, &ShareFileError{Err: err}
	}
	return share, nil
}

// checkAnyShare checks a FROST or a DKLS23 share file.
func checkAnyShare(data []byte) error {
	if bytes.Contains(data, []byte("-----BEGIN "+pemDKLSShare+"-----")) {
		_, err := parseDKLS23Share(data)
		return err
	}
	_, _, err := parseShareFile(data)
	return err
}
