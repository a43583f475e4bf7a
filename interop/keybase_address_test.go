package interop

import (
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"fmt"
	"path/filepath"
	"testing"

	gnocrypto "github.com/gnolang/gno/tm2/pkg/crypto"
	gnoed25519 "github.com/gnolang/gno/tm2/pkg/crypto/ed25519"
	gnosecp256k1 "github.com/gnolang/gno/tm2/pkg/crypto/secp256k1"

	"github.com/decred/dcrd/dcrec/secp256k1/v4"

	"github.com/signerkit/signerkit/keybase"
	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/signer/signertest"
)

// TestKeybaseAddressMatchesGno checks keybase.Address against gno's own
// PubKey.Address and crypto.AddressToBech32, for Ed25519 and secp256k1
// keys of a few seeds, and that a keybase Store opens each key by that
// address.
func TestKeybaseAddressMatchesGno(t *testing.T) {
	ctx := context.Background()
	pw := signer.SecretBytes([]byte("interop"))
	s, err := keybase.OpenStore(ctx, keybase.Config{Dir: filepath.Join(t.TempDir(), "keys"), Secret: pw, Cost: keybase.MinCost})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 4; i++ {
		seed := sha256.Sum256([]byte(fmt.Sprintf("keybase address %d", i)))

		edPriv := ed25519.NewKeyFromSeed(seed[:])
		var gnoEd gnoed25519.PubKeyEd25519
		copy(gnoEd[:], edPriv.Public().(ed25519.PublicKey))
		edWant := gnocrypto.AddressToBech32(gnoEd.Address())

		gnoK1 := gnosecp256k1.PrivKeySecp256k1(seed) // gno derives the public key itself
		k1Want := gnocrypto.AddressToBech32(gnoK1.PubKey().Address())

		edInfo, err := s.ImportKey(ctx, edPriv, signer.Ed25519, fmt.Sprintf("ed%d", i))
		if err != nil {
			t.Fatal(err)
		}
		k1Priv := secp256k1.PrivKeyFromBytes(seed[:]).ToECDSA()
		k1Info, err := s.ImportKey(ctx, k1Priv, signer.ECDSASecp256k1, fmt.Sprintf("k1-%d", i))
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			info signer.KeyInfo
			want string
		}{{edInfo, edWant}, {k1Info, k1Want}} {
			got, err := keybase.Address(c.info.Public)
			if err != nil || got != c.want {
				t.Errorf("%s: Address = %q, %v; gno says %q", c.info.Label, got, err, c.want)
				continue
			}
			if _, err := gnocrypto.AddressFromBech32(got); err != nil {
				t.Errorf("%s: gno does not parse %q: %v", c.info.Label, got, err)
			}
			sg, err := s.OpenKey(ctx, signer.KeyRef{Label: got})
			if err != nil {
				t.Errorf("%s: OpenKey by address: %v", c.info.Label, err)
				continue
			}
			msg := []byte("vote")
			sig, err := sg.SignContext(ctx, msg)
			if err != nil {
				t.Error(err)
			} else if err := signertest.VerifyStd(c.info.Algorithm, c.info.Public, msg, sig); err != nil {
				t.Errorf("%s: %v", c.info.Label, err)
			}
			sg.Close()
		}
		if i == 0 {
			t.Logf("seed 0: ed25519 %s, secp256k1 %s", edWant, k1Want)
		}
	}
}
