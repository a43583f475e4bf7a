package bench

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdh"
	"crypto/ecdsa"
	"crypto/rand"
	"crypto/rsa"
	"fmt"
	"sync"

	"github.com/signerkit/signerkit/inprocess"
	"github.com/signerkit/signerkit/internal/simtime"
	"github.com/signerkit/signerkit/openpgpcard"
	"github.com/signerkit/signerkit/openpgpcard/cardsim"
	"github.com/signerkit/signerkit/signer"
)

// The OpenPGP card decipher rows, openpgp-<token>-<algorithm>-decipher:
// PSO:DECIPHER through openpgpcard on cardsim, for every algorithm the
// token deciphers with (RSA 2048 and 4096, ECDH on P-256 and Curve25519),
// beside the sign rows of openpgpcard.go. The payload is what the card
// returns: for RSA a session key of that many bytes, cut to the most the
// key's PKCS #1 v1.5 padding carries (k − 11 bytes), so the sweep stops
// where the key does; for ECDH the 32-byte shared secret, one row. The
// card always takes one ciphertext as long as the modulus, or one point,
// so its time does not depend on the payload. Each output is checked
// against the standard library's decryption or key agreement with the
// same private key.
//
// The CPU rows beside them, raw-go-<algorithm>-<operation>, time the same
// private-key operations with Go's crypto on this host: the baseline of
// the keycard benchmark's table, whose CPU column was the host's gpg.
func init() {
	for _, p := range cardsim.Profiles() {
		for _, a := range p.Algorithms {
			if _, ok := decipherPayloads[a]; ok {
				Register(Backend{Name: "openpgp-" + p.Short() + "-" + a.String() + "-decipher", Traced: true,
					Payloads: decipherPayloads[a], Messages: decipherInputs(a), Open: openCardDecipher(p, a)})
			}
		}
	}
	for _, a := range []cardsim.Algorithm{cardsim.RSA2048, cardsim.RSA4096, cardsim.ECDHP256, cardsim.ECDHX25519} {
		Register(Backend{Name: "raw-go-" + a.String() + "-decipher", Payloads: decipherPayloads[a],
			Messages: decipherInputs(a), Open: openGoDecipher(a)})
	}
	for _, a := range []cardsim.Algorithm{cardsim.RSA2048, cardsim.RSA4096, cardsim.ECDSAP256, cardsim.EdDSA25519} {
		Register(Backend{Name: "raw-go-" + a.String() + "-sign", Algorithm: cardSignerAlgorithm[a], Open: openGoSign(a)})
	}
}

// decipherPayloads are the payloads of each decipher row.
var decipherPayloads = map[cardsim.Algorithm][]int{
	cardsim.RSA2048:    {32, 64, 128, 245},
	cardsim.RSA4096:    {32, 64, 128, 256, 501},
	cardsim.ECDHP256:   {32},
	cardsim.ECDHX25519: {32},
}

// peerKeys are the other party of the ECDH rows, one per curve.
var peerKeys = map[cardsim.Algorithm]func() (*ecdh.PrivateKey, error){
	cardsim.ECDHP256:   sync.OnceValues(func() (*ecdh.PrivateKey, error) { return ecdh.P256().GenerateKey(rand.Reader) }),
	cardsim.ECDHX25519: sync.OnceValues(func() (*ecdh.PrivateKey, error) { return ecdh.X25519().GenerateKey(rand.Reader) }),
}

// decipherKey returns the card's decryption key for a: the RSA keys the
// sign rows use, ECDH keys of its own.
func decipherKey(a cardsim.Algorithm) (crypto.PrivateKey, error) {
	switch a {
	case cardsim.ECDHP256:
		k, err := cardKeys[cardsim.ECDSAP256]()
		if err != nil {
			return nil, err
		}
		return k.(*ecdsa.PrivateKey).ECDH()
	case cardsim.ECDHX25519:
		return x25519Key()
	}
	return cardKeys[a]()
}

var x25519Key = sync.OnceValues(func() (*ecdh.PrivateKey, error) { return ecdh.X25519().GenerateKey(rand.Reader) })

// decipherInputs makes the input of a decipher row: an RSA ciphertext of
// a random session key of the payload's size (cut to the padding's
// limit), or the peer's public point.
func decipherInputs(a cardsim.Algorithm) func(size int) func() []byte {
	return func(size int) func() []byte {
		in, err := decipherInput(a, size)
		if err != nil {
			panic(fmt.Sprintf("bench: %v decipher input: %v", a, err)) // a key that cannot be made: no row can run
		}
		return func() []byte { return in }
	}
}

func decipherInput(a cardsim.Algorithm, size int) ([]byte, error) {
	priv, err := decipherKey(a)
	if err != nil {
		return nil, err
	}
	if k, ok := priv.(*rsa.PrivateKey); ok {
		key := make([]byte, min(size, k.Size()-11))
		rand.Read(key)
		//lint:ignore SA1019 OpenPGP RSA encryption is PKCS #1 v1.5 (RFC 4880 5.1), what the card deciphers
		return rsa.EncryptPKCS1v15(rand.Reader, &k.PublicKey, key)
	}
	peer, err := peerKeys[a]()
	if err != nil {
		return nil, err
	}
	return peer.PublicKey().Bytes(), nil
}

// checkDecipher checks out, what the row returned for in, against the
// standard library's decryption (RSA) or key agreement (ECDH, from the
// peer's side) with the card's key.
func checkDecipher(a cardsim.Algorithm) func(in, out []byte) error {
	return func(in, out []byte) error {
		priv, err := decipherKey(a)
		if err != nil {
			return err
		}
		var want []byte
		switch k := priv.(type) {
		case *rsa.PrivateKey:
			//lint:ignore SA1019 the padding the card removes
			want, err = rsa.DecryptPKCS1v15(nil, k, in)
		case *ecdh.PrivateKey:
			var peer *ecdh.PrivateKey
			if peer, err = peerKeys[a](); err == nil {
				want, err = peer.ECDH(k.PublicKey())
			}
		}
		if err != nil {
			return err
		}
		if !bytes.Equal(out, want) {
			return fmt.Errorf("bench: %v decipher: %d bytes out, not the standard library's %d", a, len(out), len(want))
		}
		return nil
	}
}

func openCardDecipher(p cardsim.Profile, a cardsim.Algorithm) func(context.Context, Params) (*Instance, error) {
	return func(ctx context.Context, _ Params) (*Instance, error) {
		priv, err := decipherKey(a)
		if err != nil {
			return nil, err
		}
		if a == cardsim.ECDHP256 { // cardsim takes a P-256 key as *ecdsa.PrivateKey
			if priv, err = cardKeys[cardsim.ECDSAP256](); err != nil {
				return nil, err
			}
		}
		card := cardsim.New(cardsim.Config{Profile: p, Time: simtime.ModeFromEnv()})
		if err := card.ImportKey(cardsim.SlotDecrypt, priv); err != nil {
			return nil, err
		}
		s, err := openpgpcard.Open(ctx, openpgpcard.Config{Dial: card.Dialer(), Key: openpgpcard.KeyDecrypt, PIN: signer.SecretBytes([]byte(cardsim.DefaultPW1))})
		if err != nil {
			return nil, err
		}
		return &Instance{
			Sign:   func(ctx context.Context, in []byte) ([]byte, error) { return s.DecryptContext(ctx, in, nil) },
			Public: s.Public(), Close: s.Close, Check: checkDecipher(a),
		}, nil
	}
}

func openGoDecipher(a cardsim.Algorithm) func(context.Context, Params) (*Instance, error) {
	return func(context.Context, Params) (*Instance, error) {
		priv, err := decipherKey(a)
		if err != nil {
			return nil, err
		}
		inst := &Instance{Check: checkDecipher(a)}
		switch k := priv.(type) {
		case *rsa.PrivateKey:
			inst.Public = &k.PublicKey
			inst.Sign = func(_ context.Context, in []byte) ([]byte, error) {
				//lint:ignore SA1019 the padding the card removes
				return rsa.DecryptPKCS1v15(nil, k, in)
			}
		case *ecdh.PrivateKey:
			inst.Public = k.PublicKey()
			inst.Sign = func(_ context.Context, in []byte) ([]byte, error) {
				peer, err := k.Curve().NewPublicKey(in)
				if err != nil {
					return nil, err
				}
				return k.ECDH(peer)
			}
		}
		return inst, nil
	}
}

// openGoSign signs with Go's crypto in process (package inprocess): what
// the CPU takes for the operation the card's sign rows time.
func openGoSign(a cardsim.Algorithm) func(context.Context, Params) (*Instance, error) {
	return func(context.Context, Params) (*Instance, error) {
		priv, err := cardKeys[a]()
		if err != nil {
			return nil, err
		}
		k, err := inprocess.FromPrivateKey(priv, cardSignerAlgorithm[a])
		if err != nil {
			return nil, err
		}
		return FromSigner(k), nil
	}
}
