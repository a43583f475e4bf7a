package openpgpcard_test

import (
	"context"
	"crypto"
	"crypto/ecdh"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"errors"
	"testing"

	"github.com/signerkit/signerkit/openpgpcard"
	"github.com/signerkit/signerkit/openpgpcard/cardsim"
	"github.com/signerkit/signerkit/signer"
)

func TestWrongPINCountsDownAndBlocks(t *testing.T) {
	t.Parallel()
	card := newCard(t, openpgpcard.KeySign, openpgpcard.AttrEd25519)
	cfg := userConfig(card, openpgpcard.KeySign)
	cfg.PIN = signer.SecretBytes([]byte("654321"))
	for left := cardsim.MaxTries - 1; left >= 0; left-- {
		_, err := openpgpcard.Open(context.Background(), cfg)
		var se *openpgpcard.StatusError
		if !errors.As(err, &se) {
			t.Fatalf("wrong PIN: got %v, want a *StatusError", err)
		}
		if left > 0 && (se.TriesLeft() != left || !errors.Is(err, signer.ErrWrongPassphrase)) {
			t.Fatalf("wrong PIN with %d tries left: got %v (tries %d)", left, err, se.TriesLeft())
		}
		if left == 0 && !errors.Is(err, signer.ErrDeviceLocked) {
			t.Fatalf("last wrong PIN: got %v, want ErrDeviceLocked", err)
		}
		if pw1, _ := card.Tries(); pw1 != left {
			t.Fatalf("card's PW1 counter %d, want %d", pw1, left)
		}
	}
	// Blocked: even the right PIN is refused, and the counter stays at 0.
	_, err := openpgpcard.Open(context.Background(), userConfig(card, openpgpcard.KeySign))
	if !errors.Is(err, signer.ErrDeviceLocked) {
		t.Fatalf("right PIN on a blocked card: got %v, want ErrDeviceLocked", err)
	}
	// The admin unblocks it with RESET RETRY COUNTER.
	raw := rawSession(t, card)
	raw(t, 0x9000, 0x00, 0x20, 0x00, 0x83, []byte(cardsim.DefaultPW3))
	raw(t, 0x9000, 0x00, 0x2C, 0x02, 0x81, []byte("999999"))
	cfg.PIN = signer.SecretBytes([]byte("999999"))
	s, err := openpgpcard.Open(context.Background(), cfg)
	if err != nil {
		t.Fatalf("after reset: %v", err)
	}
	defer s.Close()
	signAndVerify(t, s, []byte("after unblock"))
}

func TestNoPIN(t *testing.T) {
	t.Parallel()
	card := newCard(t, openpgpcard.KeySign, openpgpcard.AttrECDSAP256)
	cfg := userConfig(card, openpgpcard.KeySign)
	cfg.PIN = nil
	s, err := openpgpcard.Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, ok := s.Public().(*ecdsa.PublicKey); !ok {
		t.Fatalf("Public %T", s.Public())
	}
	if _, err := s.SignContext(context.Background(), []byte("x")); !errors.Is(err, signer.ErrPermissionDenied) {
		t.Fatalf("sign without PIN: got %v, want ErrPermissionDenied", err)
	}
}

func TestCardRemovedMidCommand(t *testing.T) {
	t.Parallel()
	card := newCard(t, openpgpcard.KeySign, openpgpcard.AttrEd25519)
	s, err := openpgpcard.Open(context.Background(), userConfig(card, openpgpcard.KeySign))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	card.Inject(cardsim.FaultRemove)
	if _, err := s.SignContext(context.Background(), []byte("a")); !errors.Is(err, signer.ErrDisconnected) {
		t.Fatalf("card pulled mid-command: got %v, want ErrDisconnected", err)
	}
	if _, err := s.SignContext(context.Background(), []byte("b")); !errors.Is(err, signer.ErrDeviceNotFound) {
		t.Fatalf("sign with no card: got %v, want ErrDeviceNotFound", err)
	}
	card.Insert()
	signAndVerify(t, s, []byte("back again"))
}

func TestWrongKeyAttribute(t *testing.T) {
	t.Parallel()
	admin := signer.SecretBytes([]byte(cardsim.DefaultPW3))
	// A YubiKey 4 takes no elliptic curves.
	yk := cardsim.New(cardsim.Config{Profile: cardsim.YubiKey4})
	_, err := openpgpcard.Generate(context.Background(), openpgpcard.Config{Dial: yk.Dialer(), AdminPIN: admin}, openpgpcard.KeySign, openpgpcard.AttrEd25519)
	var se *openpgpcard.StatusError
	if !errors.As(err, &se) || se.SW != 0x6A80 || !errors.Is(err, signer.ErrInvalidMessage) {
		t.Fatalf("Ed25519 on a YubiKey 4: got %v, want status 6a80", err)
	}
	// ECDSA does not decipher.
	card := cardsim.New(cardsim.Config{Profile: cardsim.Instant})
	_, err = openpgpcard.Generate(context.Background(), openpgpcard.Config{Dial: card.Dialer(), AdminPIN: admin}, openpgpcard.KeyDecrypt, openpgpcard.AttrECDSAP256)
	if !errors.As(err, &se) || se.SW != 0x6A80 {
		t.Fatalf("ECDSA in the decryption slot: got %v, want status 6a80", err)
	}
	// A decryption key does not sign.
	card = newCard(t, openpgpcard.KeyDecrypt, openpgpcard.AttrX25519)
	s, err := openpgpcard.Open(context.Background(), userConfig(card, openpgpcard.KeyDecrypt))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.SignContext(context.Background(), []byte("x")); !errors.Is(err, signer.ErrUnsupported) {
		t.Fatalf("sign with a cv25519 key: got %v, want ErrUnsupported", err)
	}
	// Generating without the admin PIN is refused by the card.
	_, err = openpgpcard.Generate(context.Background(), openpgpcard.Config{Dial: card.Dialer(), AdminPIN: signer.SecretBytes([]byte("wrong-admin"))}, openpgpcard.KeySign, openpgpcard.AttrEd25519)
	if !errors.Is(err, signer.ErrWrongPassphrase) {
		t.Fatalf("generate with a wrong admin PIN: got %v", err)
	}
}

func TestDecipher(t *testing.T) {
	t.Parallel()
	for _, a := range []openpgpcard.Attributes{openpgpcard.AttrRSA2048, openpgpcard.AttrECDHP256, openpgpcard.AttrX25519} {
		for _, short := range []bool{false, true} {
			card := cardsim.New(cardsim.Config{Profile: cardsim.Instant, ShortOnly: short})
			cfg := openpgpcard.Config{Dial: card.Dialer(), AdminPIN: signer.SecretBytes([]byte(cardsim.DefaultPW3))}
			if _, err := openpgpcard.Generate(context.Background(), cfg, openpgpcard.KeyDecrypt, a); err != nil {
				t.Fatal(err)
			}
			s, err := openpgpcard.Open(context.Background(), userConfig(card, openpgpcard.KeyDecrypt))
			if err != nil {
				t.Fatal(err)
			}
			checkDecipher(t, s, a)
			s.Close()
		}
	}
}

func checkDecipher(t *testing.T, s *openpgpcard.Signer, a openpgpcard.Attributes) {
	t.Helper()
	switch pub := s.Public().(type) {
	case *rsa.PublicKey:
		want := []byte("session key 0123456789abcdef")
		//lint:ignore SA1019 OpenPGP RSA encryption is PKCS #1 v1.5 (RFC 4880 5.1), what the card deciphers
		ct, err := rsa.EncryptPKCS1v15(rand.Reader, pub, want)
		if err != nil {
			t.Fatal(err)
		}
		got, err := s.Decrypt(rand.Reader, ct, nil)
		if err != nil || string(got) != string(want) {
			t.Fatalf("%v: Decrypt = %q, %v", a, got, err)
		}
		ct[5] ^= 1
		if _, err := s.Decrypt(rand.Reader, ct, nil); !errors.Is(err, signer.ErrInvalidMessage) {
			t.Fatalf("%v: corrupted ciphertext: got %v, want ErrInvalidMessage", a, err)
		}
	case *ecdh.PublicKey:
		eph, err := pub.Curve().GenerateKey(rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		want, err := eph.ECDH(pub)
		if err != nil {
			t.Fatal(err)
		}
		got, err := s.Decrypt(rand.Reader, eph.PublicKey().Bytes(), nil)
		if err != nil || string(got) != string(want) {
			t.Fatalf("%v: ECDH secret %x, %v; want %x", a, got, err, want)
		}
	default:
		t.Fatalf("%v: public key %T", a, pub)
	}
}

// signAndVerify signs msg and verifies it with the standard library.
func signAndVerify(t *testing.T, s *openpgpcard.Signer, msg []byte) {
	t.Helper()
	sig, err := s.SignContext(context.Background(), msg)
	if err != nil {
		t.Fatalf("sign: %v", err)
	}
	switch pub := s.Public().(type) {
	case ed25519.PublicKey:
		if !ed25519.Verify(pub, msg, sig) {
			t.Fatal("signature does not verify")
		}
	case *ecdsa.PublicKey:
		d := sha256.Sum256(msg)
		der, err := signer.ECDSAToASN1(signer.ECDSAP256, sig)
		if err != nil || !ecdsa.VerifyASN1(pub, d[:], der) {
			t.Fatal("signature does not verify")
		}
	case *rsa.PublicKey:
		d := sha256.Sum256(msg)
		if err := rsa.VerifyPKCS1v15(pub, crypto.SHA256, d[:], sig); err != nil {
			t.Fatal(err)
		}
	}
}

// rawSession selects the application on card and returns a function that
// sends one command and checks its status word.
func rawSession(t *testing.T, card *cardsim.Card) func(t *testing.T, want uint16, cla, ins, p1, p2 byte, data []byte) []byte {
	t.Helper()
	send := func(t *testing.T, want uint16, cla, ins, p1, p2 byte, data []byte) []byte {
		t.Helper()
		apdu := []byte{cla, ins, p1, p2}
		if len(data) > 0 {
			apdu = append(append(apdu, byte(len(data))), data...)
		}
		resp := card.Transmit(apdu)
		if got := uint16(resp[len(resp)-2])<<8 | uint16(resp[len(resp)-1]); got != want {
			t.Fatalf("APDU %x: status %04x, want %04x", apdu[:4], got, want)
		}
		return resp[:len(resp)-2]
	}
	send(t, 0x9000, 0x00, 0xA4, 0x04, 0x00, cardsim.AID)
	return send
}

// TestRSA4096 signs and deciphers with 4096-bit keys: their commands and
// replies need extended length or chaining and GET RESPONSE.
func TestRSA4096(t *testing.T) {
	if testing.Short() {
		t.Skip("generates a 4096-bit RSA key")
	}
	t.Parallel()
	priv, err := rsaKeys[4096]()
	if err != nil {
		t.Fatal(err)
	}
	for _, short := range []bool{false, true} {
		card := cardsim.New(cardsim.Config{Profile: cardsim.Instant, ShortOnly: short})
		if err := card.ImportKey(cardsim.SlotSign, priv); err != nil {
			t.Fatal(err)
		}
		if err := card.ImportKey(cardsim.SlotDecrypt, priv); err != nil {
			t.Fatal(err)
		}
		s, err := openpgpcard.Open(context.Background(), userConfig(card, openpgpcard.KeySign))
		if err != nil {
			t.Fatal(err)
		}
		if s.Attributes() != openpgpcard.AttrRSA4096 {
			t.Fatalf("attributes %v", s.Attributes())
		}
		signAndVerify(t, s, []byte("4096"))
		s.Close()
		d, err := openpgpcard.Open(context.Background(), userConfig(card, openpgpcard.KeyDecrypt))
		if err != nil {
			t.Fatal(err)
		}
		checkDecipher(t, d, openpgpcard.AttrRSA4096)
		d.Close()
	}
}
