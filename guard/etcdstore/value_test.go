package etcdstore

import (
	"bytes"
	"errors"
	"testing"

	"github.com/signerkit/signerkit/guard"
	"github.com/signerkit/signerkit/signer"
)

func TestValueRoundTrip(t *testing.T) {
	for _, st := range []guard.State{
		{ChainID: "c", Height: 9},
		{ChainID: "c", Height: 1 << 40, Round: 3, Step: 2, SignBytes: []byte("sign bytes"), Signature: bytes.Repeat([]byte{7}, 64)},
	} {
		got, err := DecodeValue(EncodeValue(st), "c", "k")
		if err != nil || got.Height != st.Height || got.Round != st.Round || got.Step != st.Step ||
			!bytes.Equal(got.SignBytes, st.SignBytes) || !bytes.Equal(got.Signature, st.Signature) {
			t.Fatalf("%+v: got %+v, %v", st, got, err)
		}
	}
	v := EncodeValue(guard.State{ChainID: "c", Height: 9})
	if _, err := DecodeValue(v, "d", "k"); !errors.Is(err, signer.ErrCorrupt) {
		t.Errorf("another chain's value: %v", err)
	}
	for i := range v {
		w := bytes.Clone(v)
		w[i] ^= 0x10
		if _, err := DecodeValue(w, "c", "k"); !errors.As(err, new(*guard.CorruptError)) {
			t.Errorf("byte %d flipped: %v, want a *guard.CorruptError", i, err)
		}
	}
}

// FuzzDecodeValue: any bytes decode to a state that encodes back to
// them, or to a *guard.CorruptError; never a panic.
func FuzzDecodeValue(f *testing.F) {
	f.Add(EncodeValue(guard.State{ChainID: "c", Height: 9}))
	f.Add(EncodeValue(guard.State{ChainID: "c", Height: 5, Round: 1, Step: 3, SignBytes: []byte{1, 2, 3}, Signature: []byte{4, 5}}))
	f.Add([]byte("sk-etcd1"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		st, err := DecodeValue(b, "c", "k")
		if err != nil {
			if !errors.As(err, new(*guard.CorruptError)) {
				t.Fatalf("error %v is not a *guard.CorruptError", err)
			}
			return
		}
		if !bytes.Equal(EncodeValue(st), b) {
			t.Fatalf("%x decodes to %+v, which encodes otherwise", b, st)
		}
	})
}
