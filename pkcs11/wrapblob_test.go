package pkcs11

import (
	"bytes"
	"crypto/ed25519"
	"errors"
	"testing"

	"github.com/signerkit/signerkit/signer"
)

func sampleWrapped(t testing.TB) *wrappedKey {
	pub, _, _ := ed25519.GenerateKey(bytes.NewReader(make([]byte, 32)))
	point, err := marshalECPoint(pub)
	if err != nil {
		t.Fatal(err)
	}
	return &wrappedKey{alg: signer.Ed25519, mech: 0x210a, label: "validator", id: []byte{1, 2}, point: point, wrapped: bytes.Repeat([]byte{7}, 40)}
}

func TestWrappedRoundTrip(t *testing.T) {
	w := sampleWrapped(t)
	b := w.encode()
	got, err := decodeWrapped(b)
	if err != nil {
		t.Fatal(err)
	}
	if got.alg != w.alg || got.mech != w.mech || got.label != w.label || !bytes.Equal(got.id, w.id) ||
		!bytes.Equal(got.point, w.point) || !bytes.Equal(got.wrapped, w.wrapped) {
		t.Fatalf("decoded %+v, want %+v", got, w)
	}
	for _, bad := range [][]byte{nil, b[:len(b)-1], append(bytes.Clone(b), 0), []byte("SKP11W2\n" + string(b[8:]))} {
		if _, err := decodeWrapped(bad); !errors.Is(err, signer.ErrInvalidKey) {
			t.Errorf("decode of %d damaged bytes: %v", len(bad), err)
		}
	}
}

func FuzzDecodeWrapped(f *testing.F) {
	f.Add(sampleWrapped(f).encode())
	f.Add([]byte(wrapMagic))
	f.Fuzz(func(t *testing.T, b []byte) {
		w, err := decodeWrapped(b)
		if err != nil {
			if !errors.Is(err, signer.ErrInvalidKey) && !errors.Is(err, signer.ErrUnsupported) {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		if !bytes.Equal(w.encode(), b) {
			t.Fatal("decode then encode differs")
		}
	})
}
