package secretconn

import (
	"bytes"
	"crypto/sha3"
	"encoding/hex"
	"math/rand/v2"
	"testing"
)

// sha3Sum256 is SHA3-256 built on keccakF1600, to check the permutation
// against the standard library.
func sha3Sum256(msg []byte) [32]byte {
	const rate = 136
	var st [200]byte
	for len(msg) >= rate {
		for i := 0; i < rate; i++ {
			st[i] ^= msg[i]
		}
		keccakF1600(&st)
		msg = msg[rate:]
	}
	for i, b := range msg {
		st[i] ^= b
	}
	st[len(msg)] ^= 0x06
	st[rate-1] ^= 0x80
	keccakF1600(&st)
	var out [32]byte
	copy(out[:], st[:32])
	return out
}

func TestKeccakF1600AgainstSHA3(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for n := 0; n < 600; n += 1 + n/8 {
		msg := make([]byte, n)
		for i := range msg {
			msg[i] = byte(rng.Uint32())
		}
		if got, want := sha3Sum256(msg), sha3.Sum256(msg); got != want {
			t.Fatalf("len %d: SHA3-256 on keccakF1600 = %x, want %x", n, got, want)
		}
	}
}

// The two test vectors published with Merlin (merlin crate,
// transcript::tests), also used by gtank/merlin.
func TestMerlinVectors(t *testing.T) {
	tr := newTranscript("test protocol")
	tr.appendMessage("some label", []byte("some data"))
	var c [32]byte
	tr.challengeBytes("challenge", c[:])
	if got, want := hex.EncodeToString(c[:]), "d5a21972d0d5fe320c0d263fac7fffb8145aa640af6e9bca177c03c7efcf0615"; got != want {
		t.Fatalf("simple transcript: %s, want %s", got, want)
	}

	tr = newTranscript("test protocol")
	tr.appendMessage("step1", []byte("some data"))
	data := bytes.Repeat([]byte{99}, 1024)
	for i := 0; i < 32; i++ {
		tr.challengeBytes("challenge", c[:])
		tr.appendMessage("bigdata", data)
		tr.appendMessage("challengedata", c[:])
	}
	if got, want := hex.EncodeToString(c[:]), "a8c933f54fae76e3f9bea93648c1308e7dfa2152dd51674ff3ca438351cf003c"; got != want {
		t.Fatalf("complex transcript: %s, want %s", got, want)
	}
}
