package bls_test

import (
	"context"
	"fmt"

	"github.com/signerkit/signerkit/bls"
	"github.com/signerkit/signerkit/signer"
)

// A validator signs with a min-pk key, as CometBFT v0.40's bls12381 keys
// do; anyone verifies with signer.Algorithm.Verify, and several
// signatures over one block aggregate into one.
func Example() {
	ctx := context.Background()
	var keys []*bls.PublicKey
	var sigs [][]byte
	block := []byte("block 42")
	for i := range 3 {
		ikm := make([]byte, 32)
		ikm[0] = byte(i + 1) // use crypto/rand, or GenerateKey, for real keys
		s, err := bls.FromSeed(ikm, signer.BLS12381MinPK)
		if err != nil {
			panic(err)
		}
		defer s.Close()
		// Each key proves it holds its private half before it may join.
		proof, _ := s.PopProve()
		if err := bls.PopVerify(s.PublicKey(), proof); err != nil {
			panic(err)
		}
		sig, err := s.SignContext(ctx, block)
		if err != nil {
			panic(err)
		}
		fmt.Println(len(s.PublicKey().Bytes()), len(sig), signer.BLS12381MinPK.Verify(s.Public(), block, sig) == nil)
		keys = append(keys, s.PublicKey())
		sigs = append(sigs, sig)
	}
	agg, _ := bls.AggregateSignatures(sigs, signer.BLS12381MinPK)
	fmt.Println(len(agg), bls.FastAggregateVerify(keys, block, agg, nil) == nil)
	// Output:
	// 96 96 true
	// 96 96 true
	// 96 96 true
	// 96 true
}
