package openpgpcard_test

import (
	"context"
	"crypto"
	"crypto/ecdh"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"errors"
	"testing"

	"github.com/signerkit/signerkit/openpgpcard"
	"github.com/signerkit/signerkit/openpgpcard/cardsim"
	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/signer/signertest"
)

func adminConfig(card *cardsim.Card) openpgpcard.Config {
	return openpgpcard.Config{Dial: card.Dialer(), AdminPIN: signer.SecretBytes([]byte(cardsim.DefaultPW3))}
}

// TestImport imports keys made here into each slot, over an extended and a
// short-only card (the RSA keys' templates then go chained; a 4096-bit key
// too, without -short), and checks
// that what the card signs verifies under the imported key's own public
// key with the standard library, and that what it deciphers is what the
// standard library encrypted to that key.
func TestImport(t *testing.T) {
	t.Parallel()
	rsaKey, err := rsaKeys[2048]()
	if err != nil {
		t.Fatal(err)
	}
	_, edKey, _ := ed25519.GenerateKey(rand.Reader)
	ecKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	cases := []struct {
		key  openpgpcard.Key
		priv crypto.Signer
		alg  signer.Algorithm
	}{
		{openpgpcard.KeySign, rsaKey, signer.RSAPKCS1v15},
		{openpgpcard.KeySign, edKey, signer.Ed25519},
		{openpgpcard.KeyAuth, ecKey, signer.ECDSAP256},
		{openpgpcard.KeyDecrypt, rsaKey, 0},
		{openpgpcard.KeyDecrypt, ecKey, 0},
	}
	if !testing.Short() {
		big, err := rsaKeys[4096]()
		if err != nil {
			t.Fatal(err)
		}
		cases = append(cases, struct {
			key  openpgpcard.Key
			priv crypto.Signer
			alg  signer.Algorithm
		}{openpgpcard.KeySign, big, signer.RSAPKCS1v15})
	}
	for _, short := range []bool{false, true} {
		for _, c := range cases {
			card := cardsim.New(cardsim.Config{Profile: cardsim.Instant, ShortOnly: short})
			if _, err := openpgpcard.Import(context.Background(), adminConfig(card), c.key, c.priv); err != nil {
				t.Fatalf("short=%v %v %T: %v", short, c.key, c.priv, err)
			}
			s, err := openpgpcard.Open(context.Background(), userConfig(card, c.key))
			if err != nil {
				t.Fatal(err)
			}
			if c.key == openpgpcard.KeyDecrypt {
				checkImportedDecipher(t, s, c.priv)
			} else {
				msg := []byte("signed with an imported key")
				sig, err := s.SignContext(context.Background(), msg)
				if err != nil {
					t.Fatalf("short=%v %v %T: %v", short, c.key, c.priv, err)
				}
				if err := signertest.VerifyStd(c.alg, c.priv.Public(), msg, sig); err != nil {
					t.Errorf("short=%v %v %T: %v", short, c.key, c.priv, err)
				}
			}
			s.Close()
		}
	}
}

func checkImportedDecipher(t *testing.T, s *openpgpcard.Signer, priv crypto.Signer) {
	t.Helper()
	switch k := priv.(type) {
	case *rsa.PrivateKey:
		want := []byte("a session key of 32 bytes......!")
		//lint:ignore SA1019 OpenPGP RSA encryption is PKCS #1 v1.5 (RFC 4880 5.1), what the card deciphers
		ct, err := rsa.EncryptPKCS1v15(rand.Reader, &k.PublicKey, want)
		if err != nil {
			t.Fatal(err)
		}
		got, err := s.Decrypt(nil, ct, nil)
		if err != nil || string(got) != string(want) {
			t.Errorf("RSA decipher after import: %q, %v", got, err)
		}
	case *ecdsa.PrivateKey:
		peer, _ := ecdh.P256().GenerateKey(rand.Reader)
		mine, _ := k.ECDH()
		want, _ := peer.ECDH(mine.PublicKey())
		got, err := s.Decrypt(nil, peer.PublicKey().Bytes(), nil)
		if err != nil || string(got) != string(want) {
			t.Errorf("ECDH after import: %x, %v; want %x", got, err, want)
		}
	}
}

// TestImportRefused checks the refusals: no or a wrong admin PIN, a key
// the token does not take (6A80 from a YubiKey 4 for Ed25519), and key
// types the package does not import; the card's key is unchanged after
// each.
func TestImportRefused(t *testing.T) {
	t.Parallel()
	_, edKey, _ := ed25519.GenerateKey(rand.Reader)
	x, _ := ecdh.X25519().GenerateKey(rand.Reader)
	card := cardsim.New(cardsim.Config{Profile: cardsim.Instant})
	cfg := adminConfig(card)
	if _, err := openpgpcard.Import(context.Background(), openpgpcard.Config{Dial: card.Dialer()}, openpgpcard.KeySign, edKey); !errors.Is(err, signer.ErrPermissionDenied) {
		t.Errorf("no admin PIN: %v", err)
	}
	wrong := cfg
	wrong.AdminPIN = signer.SecretBytes([]byte("87654321"))
	if _, err := openpgpcard.Import(context.Background(), wrong, openpgpcard.KeySign, edKey); !errors.Is(err, signer.ErrWrongPassphrase) {
		t.Errorf("wrong admin PIN: %v", err)
	}
	for _, c := range []struct {
		key  openpgpcard.Key
		priv crypto.PrivateKey
	}{{openpgpcard.KeyDecrypt, x}, {openpgpcard.KeyDecrypt, edKey}, {openpgpcard.KeySign, x}} {
		if _, err := openpgpcard.Import(context.Background(), cfg, c.key, c.priv); !errors.Is(err, signer.ErrUnsupported) {
			t.Errorf("%v %T: %v, want ErrUnsupported", c.key, c.priv, err)
		}
	}
	yk := cardsim.New(cardsim.Config{Profile: cardsim.YubiKey4})
	if _, err := openpgpcard.Import(context.Background(), adminConfig(yk), openpgpcard.KeySign, edKey); !errors.Is(err, signer.ErrInvalidMessage) {
		t.Errorf("Ed25519 on a YubiKey 4: %v, want ErrInvalidMessage (6A80)", err)
	}
	if _, err := openpgpcard.Open(context.Background(), userConfig(card, openpgpcard.KeySign)); !errors.Is(err, signer.ErrKeyNotFound) {
		t.Errorf("after refused imports the slot holds a key: %v", err)
	}
}
