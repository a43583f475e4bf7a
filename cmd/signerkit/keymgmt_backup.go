package main

import (
	"bytes"
	"crypto"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"strings"

	"github.com/signerkit/signerkit/signer"
)

// A keys export backup is a PEM block of type SIGNERKIT WRAPPED KEY whose
// bytes are the device's wrapped key, opaque here, and whose headers say
// what it is and where it goes back:
//
//	Scheme: yubihsm
//	Wrap-Key: label:backup          (or id:0001)
//	Label: validator
//	ID: 0a01                        (when the device has ids)
//	Algorithm: ed25519
//	Public-Key: <base64 of the PKIX public key>
//
// The public key lets keys import check that the device restored the key
// the backup names.

const backupPEMType = "SIGNERKIT WRAPPED KEY"

// wrappedBackup is a decoded backup.
type wrappedBackup struct {
	Scheme    string
	Wrap      signer.KeyRef
	Label, ID string
	Algorithm signer.Algorithm
	Public    crypto.PublicKey
	Data      []byte
}

func (b *wrappedBackup) marshal() ([]byte, error) {
	der, err := x509.MarshalPKIXPublicKey(b.Public)
	if err != nil {
		return nil, fmt.Errorf("the key's public key: %w", err)
	}
	wrap := "label:" + b.Wrap.Label
	if b.Wrap.ID != "" {
		wrap = "id:" + b.Wrap.ID
	}
	h := map[string]string{
		"Scheme":     b.Scheme,
		"Wrap-Key":   wrap,
		"Label":      b.Label,
		"Algorithm":  b.Algorithm.String(),
		"Public-Key": base64.StdEncoding.EncodeToString(der),
	}
	if b.ID != "" {
		h["ID"] = b.ID
	}
	return pem.EncodeToMemory(&pem.Block{Type: backupPEMType, Headers: h, Bytes: b.Data}), nil
}

// backupError is what a damaged or foreign backup file decodes to; it
// wraps signer.ErrInvalidKey.
type backupError struct{ problem string }

func (e *backupError) Error() string {
	return "not a signerkit keys export backup, or damaged: " + e.problem
}

func (e *backupError) Unwrap() error { return signer.ErrInvalidKey }

// parseWrappedBackup decodes a backup file; every error is a
// *backupError.
func parseWrappedBackup(data []byte) (*wrappedBackup, error) {
	blk, rest := pem.Decode(data)
	if blk == nil {
		return nil, &backupError{"no PEM block"}
	}
	if blk.Type != backupPEMType {
		return nil, &backupError{fmt.Sprintf("a PEM block of type %q", backupTruncate(blk.Type))}
	}
	if len(bytes.TrimSpace(rest)) != 0 {
		return nil, &backupError{"text after the block"}
	}
	get := func(name string) (string, error) {
		v, ok := blk.Headers[name]
		if !ok || v == "" {
			return "", &backupError{"no " + name + " header"}
		}
		return v, nil
	}
	b := &wrappedBackup{Data: blk.Bytes, ID: blk.Headers["ID"]}
	var err error
	var wrap, alg, pub string
	for _, f := range []struct {
		name string
		to   *string
	}{{"Scheme", &b.Scheme}, {"Wrap-Key", &wrap}, {"Label", &b.Label}, {"Algorithm", &alg}, {"Public-Key", &pub}} {
		if *f.to, err = get(f.name); err != nil {
			return nil, err
		}
	}
	if kind, v, ok := strings.Cut(wrap, ":"); ok && v != "" && kind == "id" {
		b.Wrap.ID = v
	} else if ok && v != "" && kind == "label" {
		b.Wrap.Label = v
	} else {
		return nil, &backupError{fmt.Sprintf("Wrap-Key %q: want label:NAME or id:HEX", backupTruncate(wrap))}
	}
	if b.Algorithm, err = signer.ParseAlgorithm(alg); err != nil {
		return nil, &backupError{fmt.Sprintf("Algorithm %q", backupTruncate(alg))}
	}
	der, err := base64.StdEncoding.DecodeString(pub)
	if err != nil {
		return nil, &backupError{"Public-Key is not base64"}
	}
	if b.Public, err = x509.ParsePKIXPublicKey(der); err != nil {
		return nil, &backupError{"Public-Key is not a PKIX public key"}
	}
	if err := b.Algorithm.CheckKey(b.Public); err != nil {
		return nil, &backupError{fmt.Sprintf("Public-Key is no %v key", b.Algorithm)}
	}
	if len(b.Data) == 0 {
		return nil, &backupError{"no wrapped key"}
	}
	return b, nil
}

// backupTruncate keeps text from a file short in messages.
func backupTruncate(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}
