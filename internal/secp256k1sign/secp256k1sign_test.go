package secp256k1sign

import (
	"bytes"
	"crypto/sha256"
	"testing"

	"github.com/decred/dcrd/dcrec/secp256k1/v4"
	"github.com/decred/dcrd/dcrec/secp256k1/v4/ecdsa"
)

func TestFromScalar(t *testing.T) {
	n := secp256k1.Params().N.FillBytes(make([]byte, 32))
	nMinus1 := bytes.Clone(n)
	nMinus1[31]--
	one := make([]byte, 32)
	one[31] = 1
	for _, d := range [][]byte{one, nMinus1} {
		k, ok := FromScalar(d)
		if !ok {
			t.Fatalf("FromScalar(%x) refused", d)
		}
		if got := k.Key.Bytes(); !bytes.Equal(got[:], d) {
			t.Errorf("FromScalar(%x) holds %x", d, got)
		}
	}
	for _, d := range [][]byte{nil, make([]byte, 32), n, bytes.Repeat([]byte{0xff}, 32), one[1:], append([]byte{0}, one...)} {
		if _, ok := FromScalar(d); ok {
			t.Errorf("FromScalar(%x) accepted", d)
		}
	}
}

// Sign's r‖s and SignASN1's DER are the same deterministic, low-S
// signature, and it verifies.
func TestSign(t *testing.T) {
	k, ok := FromScalar(bytes.Repeat([]byte{7}, 32))
	if !ok {
		t.Fatal("FromScalar refused")
	}
	digest := sha256.Sum256([]byte("vote"))
	rs := Sign(k, digest[:])
	if len(rs) != 64 {
		t.Fatalf("r‖s of %d bytes", len(rs))
	}
	der, err := ecdsa.ParseDERSignature(SignASN1(k, digest[:]))
	if err != nil {
		t.Fatal(err)
	}
	r, s := der.R(), der.S()
	var want [64]byte
	r.PutBytesUnchecked(want[:32])
	s.PutBytesUnchecked(want[32:])
	if !bytes.Equal(rs, want[:]) {
		t.Errorf("Sign %x, SignASN1 %x", rs, want)
	}
	if s.IsOverHalfOrder() {
		t.Error("high S")
	}
	if !der.Verify(digest[:], k.PubKey()) {
		t.Error("the signature does not verify")
	}
}
