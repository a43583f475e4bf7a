package yubihsm

import (
	"bytes"
	"crypto/aes"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"errors"
	"testing"

	"github.com/certusone/yubihsm-go/commands"

	"github.com/signerkit/signerkit/internal/scp03"
	"github.com/signerkit/signerkit/signer"
)

// FuzzParsePublic decodes arbitrary Get Public Key answers: a key comes
// back only of the kind the algorithm names, and every refusal is a
// protocol error or ErrUnsupported.
func FuzzParsePublic(f *testing.F) {
	f.Add(byte(commands.AlgorithmED25519), make([]byte, 32))
	f.Add(byte(commands.AlgorithmP384), make([]byte, 96))
	f.Add(byte(commands.AlgorithmSecp256k1), append(bytes.Repeat([]byte{0x79}, 32), make([]byte, 32)...))
	f.Add(byte(commands.AlgorithmRSA2048), append([]byte{0xc1}, bytes.Repeat([]byte{0x33}, 255)...))
	f.Fuzz(func(t *testing.T, alg byte, data []byte) {
		pub, err := parsePublic(&commands.GetPubKeyResponse{Algorithm: commands.Algorithm(alg), KeyData: data})
		if err != nil {
			var pe *protocolError
			if !errors.As(err, &pe) && !errors.Is(err, signer.ErrUnsupported) && !errors.Is(err, signer.ErrInvalidKey) {
				t.Fatalf("error %v is untyped", err)
			}
			return
		}
		want, _ := signerAlgorithm(commands.Algorithm(alg), commands.CapabilityAsymmetricSignPkcs)
		switch k := pub.(type) {
		case ed25519.PublicKey:
			err = want.CheckKey(k)
		case *ecdsa.PublicKey:
			err = want.CheckKey(k)
		case *rsa.PublicKey:
			if !want.IsRSA() || k.N.BitLen() != 8*len(data) {
				t.Fatalf("RSA key from algorithm %d, %d bytes", alg, len(data))
			}
		default:
			t.Fatalf("%T", pub)
		}
		if err != nil {
			t.Fatalf("algorithm %d gave a %T that is not its kind: %v", alg, pub, err)
		}
	})
}

// FuzzReadRaw reads arbitrary last frames as a session's unparsed answer:
// a protocol error or the data of an answer to the command, never a panic.
func FuzzReadRaw(f *testing.F) {
	block, _ := aes.NewCipher(make([]byte, 16))
	inner := scp03.Pad(scp03.Frame{Cmd: 0x55 | 0x80, Payload: []byte("sig")}.Bytes())
	ct := scp03.Encrypt(block, scp03.IV(block, 7), inner)
	good := scp03.Frame{Cmd: 0x85, Payload: append(append([]byte{0}, ct...), make([]byte, 8)...)}.Bytes()
	f.Add(good)
	f.Add([]byte{0x85, 0, 1, 0})
	f.Fuzz(func(t *testing.T, frame []byte) {
		s := &session{conn: &conn{last: frame}, block: block}
		r, err := s.readRaw(0x55, 7)
		if err != nil {
			var pe *protocolError
			if !errors.As(err, &pe) {
				t.Fatalf("untyped %v", err)
			}
			return
		}
		if bytes.Equal(frame, good) && string(r.data) != "sig" {
			t.Fatalf("read %q from the seed", r.data)
		}
	})
}
