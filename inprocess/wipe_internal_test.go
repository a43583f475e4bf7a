package inprocess

import (
	"context"
	"crypto/rand"
	"testing"

	"github.com/signerkit/signerkit/internal/eckey"
	"github.com/signerkit/signerkit/signer"
)

// TestCloseWipesECDSAScalar: a P-256 or P-384 Signer holds its scalar as a
// math/big value of its own, whichever way it was made, and Close zeroes
// its words.
func TestCloseWipesECDSAScalar(t *testing.T) {
	for _, alg := range []signer.Algorithm{signer.ECDSAP256, signer.ECDSAP384} {
		for _, how := range []string{"Generate", "FromSeed"} {
			var k *Signer
			var err error
			if how == "Generate" {
				k, err = Generate(alg)
			} else {
				seed := make([]byte, alg.Curve().Params().BitSize/8)
				rand.Read(seed)
				seed[0] = 1 // below n
				k, err = FromSeed(seed, alg)
			}
			if err != nil {
				t.Fatal(err)
			}
			msg := []byte("vote")
			sig, err := k.SignContext(context.Background(), msg)
			if err != nil || alg.Verify(k.Public(), msg, sig) != nil {
				t.Fatalf("%v %s: sign: %v", alg, how, err)
			}
			words := eckey.Scalar(k.ec).Bits()
			if len(words) == 0 {
				t.Fatalf("%v %s: no scalar", alg, how)
			}
			k.Close()
			for _, w := range words {
				if w != 0 {
					t.Fatalf("%v %s: Close left the scalar's words", alg, how)
				}
			}
		}
	}
}
