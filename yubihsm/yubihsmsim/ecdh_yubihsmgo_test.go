package yubihsmsim_test

import (
	"bytes"
	"crypto/ecdh"
	"crypto/rand"
	"testing"

	"github.com/certusone/yubihsm-go/commands"
	"github.com/decred/dcrd/dcrec/secp256k1/v4"
)

// TestYubihsmGoECDH: Derive ECDH through yubihsm-go on P-256, P-384 and
// secp256k1 keys gives the shared secret crypto/ecdh and decred's
// secp256k1 compute from the other side.
func TestYubihsmGoECDH(t *testing.T) {
	send := goSession(t)
	caps := commands.CapabilityAsymmetricDeriveEcdh
	for i, curve := range []ecdh.Curve{ecdh.P256(), ecdh.P384()} {
		id := uint16(0x0d01 + i)
		alg := []commands.Algorithm{commands.AlgorithmP256, commands.AlgorithmP384}[i]
		send(commands.CreateGenerateAsymmetricKeyCommand(id, []byte("ecdh"), 1, caps, alg))
		pk := send(commands.CreateGetPubKeyCommand(id)).(*commands.GetPubKeyResponse)
		devPub, err := curve.NewPublicKey(append([]byte{4}, pk.KeyData...))
		if err != nil {
			t.Fatal(err)
		}
		peer, _ := curve.GenerateKey(rand.Reader)
		want, err := peer.ECDH(devPub)
		if err != nil {
			t.Fatal(err)
		}
		got := send(commands.CreateDeriveEcdhCommand(id, peer.PublicKey().Bytes())).(*commands.DeriveEcdhResponse)
		if !bytes.Equal(got.XCoordinate, want) {
			t.Fatalf("%v: device %x, crypto/ecdh %x", curve, got.XCoordinate, want)
		}
	}
	send(commands.CreateGenerateAsymmetricKeyCommand(0x0d03, []byte("k1 ecdh"), 1, caps, commands.AlgorithmSecp256k1))
	pk := send(commands.CreateGetPubKeyCommand(0x0d03)).(*commands.GetPubKeyResponse)
	devPub, err := secp256k1.ParsePubKey(append([]byte{4}, pk.KeyData...))
	if err != nil {
		t.Fatal(err)
	}
	peer, _ := secp256k1.GeneratePrivateKey()
	got := send(commands.CreateDeriveEcdhCommand(0x0d03, peer.PubKey().SerializeUncompressed())).(*commands.DeriveEcdhResponse)
	if want := secp256k1.GenerateSharedSecret(peer, devPub); !bytes.Equal(got.XCoordinate, want) {
		t.Fatalf("secp256k1: device %x, decred %x", got.XCoordinate, want)
	}
}
