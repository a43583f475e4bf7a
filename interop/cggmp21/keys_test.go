package cggmp21

import (
	"context"
	"os"
	"testing"
	"time"
)

//go:generate env SK_CGGMP21_WRITE_KEYS=1 go test -count=1 -run ^TestWriteKeys$ .

// TestWriteKeys writes KeysFile from a new key generation, when
// SK_CGGMP21_WRITE_KEYS=1 (go generate, make cggmp21-keys).
func TestWriteKeys(t *testing.T) {
	if os.Getenv("SK_CGGMP21_WRITE_KEYS") != "1" {
		t.Skip("SK_CGGMP21_WRITE_KEYS=1 writes " + KeysFile)
	}
	m := newMesh(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	keys, err := m.Keygen(ctx)
	if err != nil {
		t.Fatal(err)
	}
	b, err := EncodeKeys(keys)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := DecodeKeys(b); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(KeysFile, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// loadKeys reads KeysFile.
func loadKeys(t testing.TB) Keys {
	t.Helper()
	b, err := os.ReadFile(KeysFile)
	if err != nil {
		t.Fatalf("%v (go generate writes it)", err)
	}
	keys, err := DecodeKeys(b)
	if err != nil {
		t.Fatal(err)
	}
	return keys
}
