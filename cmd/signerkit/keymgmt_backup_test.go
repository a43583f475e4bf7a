package main

import (
	"bytes"
	"crypto/ed25519"
	"errors"
	"testing"

	"github.com/signerkit/signerkit/signer"
)

func sampleBackup() *wrappedBackup {
	pub, _, _ := ed25519.GenerateKey(bytes.NewReader(make([]byte, 32)))
	return &wrappedBackup{Scheme: "yubihsm", Wrap: signer.KeyRef{Label: "backup"}, Label: "validator", ID: "0a01",
		Algorithm: signer.Ed25519, Public: pub, Data: bytes.Repeat([]byte{9}, 120)}
}

func TestBackupRoundTrip(t *testing.T) {
	for _, b := range []*wrappedBackup{sampleBackup(), func() *wrappedBackup { b := sampleBackup(); b.Wrap = signer.KeyRef{ID: "0001"}; b.ID = ""; return b }()} {
		data, err := b.marshal()
		if err != nil {
			t.Fatal(err)
		}
		if !isWrappedBackup(data) {
			t.Fatal("isWrappedBackup: false")
		}
		got, err := parseWrappedBackup(data)
		if err != nil {
			t.Fatal(err)
		}
		if got.Scheme != b.Scheme || got.Wrap != b.Wrap || got.Label != b.Label || got.ID != b.ID || got.Algorithm != b.Algorithm ||
			!got.Public.(ed25519.PublicKey).Equal(b.Public) || !bytes.Equal(got.Data, b.Data) {
			t.Fatalf("decoded %+v, want %+v", got, b)
		}
	}
	good, _ := sampleBackup().marshal()
	for name, bad := range map[string][]byte{
		"empty":     nil,
		"key file":  []byte("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"),
		"trailing":  append(bytes.Clone(good), "junk"...),
		"no scheme": bytes.Replace(good, []byte("Scheme: yubihsm\n"), nil, 1),
		"bad wrap":  bytes.Replace(good, []byte("Wrap-Key: label:backup"), []byte("Wrap-Key: backup"), 1),
		"bad alg":   bytes.Replace(good, []byte("Algorithm: ed25519"), []byte("Algorithm: ed448"), 1),
		"cut":       good[:len(good)-30],
	} {
		if _, err := parseWrappedBackup(bad); !errors.Is(err, signer.ErrInvalidKey) {
			t.Errorf("%s: %v, want ErrInvalidKey", name, err)
		}
	}
}

func FuzzParseWrappedBackup(f *testing.F) {
	good, _ := sampleBackup().marshal()
	f.Add(good)
	f.Add([]byte("-----BEGIN SIGNERKIT WRAPPED KEY-----\n\n-----END SIGNERKIT WRAPPED KEY-----\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		b, err := parseWrappedBackup(data)
		if err != nil {
			var be *backupError
			if !errors.As(err, &be) || !errors.Is(err, signer.ErrInvalidKey) {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		again, err := b.marshal()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := parseWrappedBackup(again); err != nil {
			t.Fatalf("a decoded backup does not decode again: %v", err)
		}
	})
}
