package keybase

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"math/big"
	"path/filepath"
	"strings"
	"testing"

	"github.com/decred/dcrd/dcrec/secp256k1/v4"
	//lint:ignore SA1019 RIPEMD-160 is in tm2's secp256k1 address definition, which this test checks against
	"golang.org/x/crypto/ripemd160"

	"github.com/signerkit/signerkit/internal/bech32"
	"github.com/signerkit/signerkit/internal/eckey"
	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/signer/signertest"
)

// Keys of seed sha256("keybase address 0"), and their addresses as gno
// v1.7.1 computes them (interop's TestKeybaseAddressMatchesGno).
func addressKeys() (ed25519.PrivateKey, *ecdsa.PrivateKey) {
	seed := sha256.Sum256([]byte("keybase address 0"))
	return ed25519.NewKeyFromSeed(seed[:]), secp256k1.PrivKeyFromBytes(seed[:]).ToECDSA()
}

const (
	goldenEd25519   = "g1k39xrl9y3mcxrqasyuwckpjal3v7l4gwk5qswz"
	goldenSecp256k1 = "g1gphklayth6wdfckqf2e3zg8azqdhkhtqp6u3dx"
)

func TestAddress(t *testing.T) {
	ed, k1 := addressKeys()
	edPub := ed.Public().(ed25519.PublicKey)
	sum := sha256.Sum256(edPub)
	edDef, _ := bech32.EncodeBytes("g", sum[:20])
	k1x, k1y := eckey.Coordinates(&k1.PublicKey)
	k1Uncomp := append([]byte{4}, append(k1x.FillBytes(make([]byte, 32)), k1y.FillBytes(make([]byte, 32))...)...)
	k1Comp, _ := secp256k1.ParsePubKey(k1Uncomp)
	sha := sha256.Sum256(k1Comp.SerializeCompressed())
	h := ripemd160.New()
	h.Write(sha[:])
	k1Def, _ := bech32.EncodeBytes("g", h.Sum(nil))
	for _, c := range []struct {
		pub       any
		def, gold string
	}{
		{edPub, edDef, goldenEd25519},
		{&k1.PublicKey, k1Def, goldenSecp256k1},
		{k1Comp, k1Def, goldenSecp256k1},
	} {
		got, err := Address(c.pub)
		if err != nil || got != c.def || got != c.gold {
			t.Errorf("Address(%T) = %q, %v; by definition %q, gno %q", c.pub, got, err, c.def, c.gold)
		}
		if raw, ok := ParseAddress(strings.ToUpper(got)); !ok || len(raw) != 20 {
			t.Errorf("ParseAddress(upper %q) failed", got)
		}
	}

	p256, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if _, err := Address(&p256.PublicKey); !errors.Is(err, signer.ErrInvalidKey) {
		t.Errorf("P-256 key: got %v, want ErrInvalidKey (not on secp256k1)", err)
	}
	if _, err := Address("key"); !errors.Is(err, signer.ErrUnsupported) {
		t.Errorf("string: got %v, want ErrUnsupported", err)
	}
	if _, err := Address(ed25519.PublicKey{1, 2}); !errors.Is(err, signer.ErrInvalidKey) {
		t.Errorf("short Ed25519 key: got %v", err)
	}
	off := eckey.NewPublic(k1.Curve, big.NewInt(1), big.NewInt(1))
	if _, err := Address(off); !errors.Is(err, signer.ErrInvalidKey) {
		t.Errorf("point off the curve: got %v", err)
	}
	for _, s := range []string{"validator", "cosmos1k39xrl9y3mcxrqasyuwckpjal3v7l4gwu6lw5q", goldenEd25519[:len(goldenEd25519)-1] + "q", "g1qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqq"} {
		if _, ok := ParseAddress(s); ok {
			t.Errorf("ParseAddress(%q) accepted it", s)
		}
	}
}

func TestOpenByAddress(t *testing.T) {
	ctx := context.Background()
	s := testStore(t)
	ed, k1 := addressKeys()
	if _, err := s.ImportKey(ctx, ed, signer.Ed25519, "validator"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ImportKey(ctx, k1, signer.ECDSASecp256k1, "account"); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		addr, name string
		alg        signer.Algorithm
	}{
		{goldenEd25519, "validator", signer.Ed25519},
		{strings.ToUpper(goldenEd25519), "validator", signer.Ed25519},
		{goldenSecp256k1, "account", signer.ECDSASecp256k1},
	} {
		info, err := s.KeyInfo(ctx, c.addr)
		if err != nil || info.Label != c.name || info.Algorithm != c.alg {
			t.Errorf("KeyInfo(%s) = %+v, %v", c.addr, info, err)
			continue
		}
		if a, err := Address(info.Public); err != nil || !strings.EqualFold(a, c.addr) {
			t.Errorf("Address(KeyInfo(%s)) = %q, %v", c.addr, a, err)
		}
		sg, err := s.OpenKey(ctx, signer.KeyRef{Label: c.addr, Algorithm: c.alg})
		if err != nil {
			t.Fatal(err)
		}
		msg := []byte("vote")
		sig, err := sg.SignContext(ctx, msg)
		if err != nil {
			t.Fatal(err)
		}
		if err := signertest.VerifyStd(c.alg, info.Public, msg, sig); err != nil {
			t.Errorf("%s: %v", c.addr, err)
		}
		sg.Close()
	}
	// The wrong algorithm is refused as for a name.
	if _, err := s.OpenKey(ctx, signer.KeyRef{Label: goldenEd25519, Algorithm: signer.ECDSASecp256k1}); !errors.Is(err, signer.ErrInvalidArgument) {
		t.Errorf("OpenKey by address, wrong algorithm: got %v", err)
	}
	// An address no key has: not found, unless a key has it as its name.
	var other [20]byte
	otherAddr, _ := bech32.EncodeBytes("g", other[:])
	if _, err := s.KeyInfo(ctx, otherAddr); !errors.Is(err, signer.ErrKeyNotFound) {
		t.Errorf("KeyInfo(unknown address): got %v", err)
	}
	if _, err := s.ImportKey(ctx, ed, signer.Ed25519, otherAddr); err != nil {
		t.Fatal(err)
	}
	if info, err := s.KeyInfo(ctx, otherAddr); err != nil || info.Label != otherAddr {
		t.Errorf("KeyInfo(a name that is an address no key has) = %+v, %v", info, err)
	}
	// Open and a keybase: URI take an address as the label.
	sg, err := Open(ctx, Config{Dir: s.Dir(), Secret: pw, Key: signer.KeyRef{Label: goldenSecp256k1}})
	if err != nil {
		t.Fatal(err)
	}
	if !sg.Public().(*ecdsa.PublicKey).Equal(&k1.PublicKey) {
		t.Error("Open by address opened another key")
	}
	sg.Close()
	u, err := signer.OpenSecret(ctx, "keybase:dir="+filepath.ToSlash(s.Dir())+";label="+goldenEd25519, pw)
	if err != nil {
		t.Fatal(err)
	}
	if !u.Public().(ed25519.PublicKey).Equal(ed.Public()) {
		t.Error("keybase: URI by address opened another key")
	}
	u.Close()
	// A closed store fails as for a name.
	s.Close()
	if _, err := s.OpenKey(ctx, signer.KeyRef{Label: goldenEd25519}); !errors.Is(err, signer.ErrClosed) {
		t.Errorf("closed store: got %v", err)
	}
}
