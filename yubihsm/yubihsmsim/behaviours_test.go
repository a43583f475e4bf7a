package yubihsmsim

import (
	"bytes"
	"crypto/ecdh"
	"crypto/rand"
	"encoding/binary"
	"testing"

	"github.com/signerkit/signerkit/yubihsm"
)

// TestAuthAlgorithmToggle: the authentication algorithm an authentication
// key holds cannot be turned off, so it never reads back off while
// sessions run on it; P-256 authentication, which no key holds yet, can,
// and then no key of it can be put.
func TestAuthAlgorithmToggle(t *testing.T) {
	d := New(Config{})
	h, bad := newHost(t, d, 1, "password")
	if h == nil {
		t.Fatalf("session: %x", bad)
	}
	if r := sdkPutOption(h, OptionAlgorithmToggle, []byte{AlgAuthAES, 0}); !isErr(r, yubihsm.CodeInvalidData) {
		t.Fatalf("turn aes128-yubico-authentication off: %x", r)
	}
	if algs := sdkEnabledAlgorithms(t, h); !algs[AlgAuthAES] {
		t.Fatal("aes128-yubico-authentication reads back off")
	}
	if h2, bad := newHost(t, d, 1, "password"); h2 == nil {
		t.Fatalf("a new session: %x", bad)
	}
	if r := sdkPutOption(h, OptionAlgorithmToggle, []byte{AlgAuthECP256, 0}); r != nil {
		t.Fatalf("turn ec-p256-yubico-authentication off: %x", r)
	}
	if algs := sdkEnabledAlgorithms(t, h); algs[AlgAuthECP256] {
		t.Fatal("ec-p256-yubico-authentication reads back on")
	}
	k, _ := ecdh.P256().GenerateKey(rand.Reader)
	put := append(keyTemplate(0x30, "asym", 1, 0, AlgAuthECP256), make([]byte, 8)...)
	if r := h.do(CmdPutAuthKey, append(put, k.PublicKey().Bytes()[1:]...)); !isErr(r, yubihsm.CodeAlgorithmDisabled) {
		t.Errorf("put a P-256 authentication key with it off: %x", r)
	}
}

// TestListCapabilitiesAnyOf: a capabilities filter with two bits lists
// the objects holding either, as python-yubihsm's list_objects documents
// ("one or more of these capabilities"), as the domains filter does.
func TestListCapabilitiesAnyOf(t *testing.T) {
	d := New(Config{})
	h, bad := newHost(t, d, 1, "password")
	if h == nil {
		t.Fatalf("session: %x", bad)
	}
	h.do(CmdGenerateAsymKey, keyTemplate(0x10, "ed", 1, CapSignEdDSA, AlgEd25519))
	h.do(CmdGenerateAsymKey, keyTemplate(0x11, "ec", 2, CapSignECDSA, AlgP256))
	h.do(CmdGenerateAsymKey, keyTemplate(0x12, "none", 4, 0, AlgP256))
	filter := append([]byte{2, TypeAsymmetric, 4}, binary.BigEndian.AppendUint64(nil, CapSignEdDSA|CapSignECDSA)...)
	want := []byte{CmdListObjects | 0x80, 0, 8, 0, 0x10, TypeAsymmetric, 0, 0, 0x11, TypeAsymmetric, 0}
	if r := h.do(CmdListObjects, filter); !bytes.Equal(r, want) {
		t.Errorf("two capability bits: %x, want %x", r, want)
	}
	if r := h.do(CmdListObjects, []byte{2, TypeAsymmetric, 3, 0, 3}); !bytes.Equal(r, want) {
		t.Errorf("two domain bits: %x, want %x", r, want)
	}
}
