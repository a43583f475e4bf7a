//go:build bls12381

package cometbft040

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"testing"

	"github.com/cometbft/cometbft/crypto/bls12381"
	cmtjson "github.com/cometbft/cometbft/libs/json"
	"github.com/cometbft/cometbft/privval"

	"github.com/signerkit/signerkit/bls"
	"github.com/signerkit/signerkit/signer"
)

var sizes = []int{0, 1, 32, 100, 1024, 64 << 10}

// pair returns CometBFT's key and ours from one secret, both as CometBFT's
// GenPrivKeyFromSecret derives it.
func pair(t *testing.T, secret []byte) (*bls12381.PrivKey, *bls.Signer) {
	t.Helper()
	theirs, err := bls12381.GenPrivKeyFromSecret(secret)
	if err != nil {
		t.Fatal(err)
	}
	ours, err := bls.FromCometBFTSecret(secret, signer.BLS12381MinPK)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ours.Close() })
	return theirs, ours
}

func secrets() [][]byte {
	out := [][]byte{nil, []byte("validator"), bytes.Repeat([]byte{0x42}, 32), bytes.Repeat([]byte{0x17}, 100)}
	for range 4 {
		b := make([]byte, 32)
		rand.Read(b)
		out = append(out, b)
	}
	return out
}

// TestKeys checks that a secret gives the same private key, public key and
// address in both, in CometBFT's sizes, and that each imports the other's.
func TestKeys(t *testing.T) {
	for _, secret := range secrets() {
		theirs, ours := pair(t, secret)
		sk, err := ours.SecretKey()
		if err != nil {
			t.Fatal(err)
		}
		if len(sk) != bls12381.PrivKeySize || !bytes.Equal(sk, theirs.Bytes()) {
			t.Fatalf("%d-byte secret: private key %x, CometBFT's %x", len(secret), sk, theirs.Bytes())
		}
		pub := ours.PublicKey().Bytes()
		if len(pub) != bls12381.PubKeySize || !bytes.Equal(pub, theirs.PubKey().Bytes()) {
			t.Fatalf("public key %x, CometBFT's %x", pub, theirs.PubKey().Bytes())
		}
		if !bytes.Equal(ours.PublicKey().Address(), theirs.PubKey().Address()) {
			t.Fatalf("address %X, CometBFT's %X", ours.PublicKey().Address(), theirs.PubKey().Address())
		}

		// Import both ways.
		imported, err := bls12381.NewPrivateKeyFromBytes(sk)
		if err != nil || !imported.Equals(theirs) {
			t.Fatalf("CometBFT imports our private key: %v", err)
		}
		back, err := bls.FromSecretKey(theirs.Bytes(), signer.BLS12381MinPK)
		if err != nil || !back.PublicKey().Equal(ours.PublicKey()) {
			t.Fatalf("we import CometBFT's private key: %v", err)
		}
		back.Close()
		theirPub, err := bls12381.NewPublicKeyFromBytes(pub)
		if err != nil || !theirPub.Equals(theirs.PubKey()) {
			t.Fatalf("CometBFT imports our public key: %v", err)
		}
		ourPub, err := bls.ParsePublicKey(theirs.PubKey().Bytes(), signer.BLS12381MinPK)
		if err != nil || !ourPub.Equal(ours.PublicKey()) {
			t.Fatalf("we import CometBFT's public key: %v", err)
		}
		clear(sk)
	}
}

// TestSignatures checks that CometBFT verifies our signatures and we
// verify CometBFT's, over messages up to 64 KiB, and that the two are the
// same bytes (BLS signatures are deterministic).
func TestSignatures(t *testing.T) {
	for i, secret := range secrets() {
		theirs, ours := pair(t, secret)
		for _, size := range sizes {
			msg := make([]byte, size)
			rand.Read(msg)
			sig, err := ours.SignContext(context.Background(), msg)
			if err != nil {
				t.Fatal(err)
			}
			if len(sig) != bls12381.SignatureLength {
				t.Fatalf("signature is %d bytes, CometBFT's are %d", len(sig), bls12381.SignatureLength)
			}
			if !theirs.PubKey().VerifySignature(msg, sig) {
				t.Fatalf("key %d, %d-byte message: CometBFT rejects our signature", i, size)
			}
			theirSig, err := theirs.Sign(msg)
			if err != nil {
				t.Fatal(err)
			}
			if err := signer.BLS12381MinPK.Verify(ours.Public(), msg, theirSig); err != nil {
				t.Fatalf("key %d, %d-byte message: we reject CometBFT's signature: %v", i, size, err)
			}
			if !bytes.Equal(sig, theirSig) {
				t.Fatalf("key %d, %d-byte message: our signature %x, CometBFT's %x", i, size, sig, theirSig)
			}
			// Neither accepts it for another message.
			other := append(bytes.Clone(msg), 1)
			if theirs.PubKey().VerifySignature(other, sig) {
				t.Fatal("CometBFT accepts our signature for another message")
			}
			if ours.PublicKey().VerifySignature(other, theirSig) == nil {
				t.Fatal("we accept CometBFT's signature for another message")
			}
		}
	}
}

// TestValidation checks that both refuse the same bad keys and signatures.
func TestValidation(t *testing.T) {
	theirs, ours := pair(t, []byte("validation"))
	msg := []byte("vote")
	sig, _ := ours.SignContext(context.Background(), msg)

	infinity := make([]byte, 96)
	infinity[0] = 0x40
	offCurve := ours.PublicKey().Bytes()
	offCurve[95] ^= 1
	for name, b := range map[string][]byte{"infinity": infinity, "off the curve": offCurve, "short": offCurve[:95]} {
		if _, err := bls12381.NewPublicKeyFromBytes(b); err == nil {
			t.Errorf("%s: CometBFT accepts the public key", name)
		}
		if _, err := bls.ParsePublicKey(b, signer.BLS12381MinPK); !errors.Is(err, signer.ErrInvalidKey) {
			t.Errorf("%s: ParsePublicKey = %v, want ErrInvalidKey", name, err)
		}
	}
	sigInf := make([]byte, 96)
	sigInf[0] = 0xc0
	flipped := bytes.Clone(sig)
	flipped[10] ^= 1
	for name, s := range map[string][]byte{"infinity": sigInf, "flipped": flipped, "short": sig[:95], "long": append(bytes.Clone(sig), 0)} {
		if theirs.PubKey().VerifySignature(msg, s) {
			t.Errorf("%s: CometBFT accepts the signature", name)
		}
		if err := ours.PublicKey().VerifySignature(msg, s); !errors.Is(err, signer.ErrInvalidSignature) {
			t.Errorf("%s: VerifySignature = %v", name, err)
		}
	}

	// One difference, on purpose: blst reads a 96-byte key whose
	// compression flag is set as its first 48 bytes and ignores the rest,
	// so CometBFT takes such bytes as the key; we refuse any encoding that
	// is not the canonical one of its point.
	padded := append(ours.PublicKey().Compressed(), bytes.Repeat([]byte{0xee}, 48)...)
	if k, err := bls12381.NewPublicKeyFromBytes(padded); err != nil || !k.Equals(theirs.PubKey()) {
		t.Logf("CometBFT now refuses a flagged 96-byte key too (%v)", err)
	}
	if _, err := bls.ParsePublicKey(padded, signer.BLS12381MinPK); !errors.Is(err, signer.ErrInvalidKey) {
		t.Errorf("flagged 96-byte key: ParsePublicKey = %v, want ErrInvalidKey", err)
	}
}

// TestKeyFile passes priv_validator_key.json files both ways: ours read by
// CometBFT's JSON decoding of FilePVKey, CometBFT's read by ParseKeyFile.
func TestKeyFile(t *testing.T) {
	theirs, ours := pair(t, []byte("key file"))
	data, err := bls.MarshalKeyFile(ours)
	if err != nil {
		t.Fatal(err)
	}
	var pv privval.FilePVKey
	if err := cmtjson.Unmarshal(data, &pv); err != nil {
		t.Fatalf("CometBFT reads our key file: %v\n%s", err, data)
	}
	if !pv.PrivKey.Equals(theirs) || !pv.PubKey.Equals(theirs.PubKey()) || !bytes.Equal(pv.Address, theirs.PubKey().Address()) {
		t.Fatalf("CometBFT read another key from our file")
	}

	out, err := cmtjson.MarshalIndent(privval.FilePVKey{
		Address: theirs.PubKey().Address(),
		PubKey:  theirs.PubKey(),
		PrivKey: *theirs,
	}, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(data, out) {
		t.Errorf("our key file is not byte for byte CometBFT's:\nours\n%s\nCometBFT's\n%s", data, out)
	}
	k, err := bls.ParseKeyFile(out, 0)
	if err != nil {
		t.Fatalf("we read CometBFT's key file: %v\n%s", err, out)
	}
	defer k.Close()
	if !k.PublicKey().Equal(ours.PublicKey()) {
		t.Fatal("we read another key from CometBFT's file")
	}
}
