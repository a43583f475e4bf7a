//go:build cgo

package bls_test

import (
	"context"
	"crypto/rand"
	"testing"

	circlbls "github.com/cloudflare/circl/sign/bls"

	"github.com/signerkit/signerkit/bls"
	"github.com/signerkit/signerkit/signer"
)

// BenchmarkBackends compares blst (through this package) with circl's
// pure-Go sign/bls at a 32-byte message: what a build without cgo, which
// signs on circl, costs (see the package doc).
func BenchmarkBackends(b *testing.B) {
	msg := make([]byte, 32)
	rand.Read(msg)
	ikm := make([]byte, 32)
	rand.Read(ikm)
	for _, alg := range algs {
		s, err := bls.FromSeed(ikm, alg)
		if err != nil {
			b.Fatal(err)
		}
		sig, _ := s.SignContext(context.Background(), msg)
		b.Run("impl=blst/alg="+alg.String()+"/op=sign", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				s.SignContext(context.Background(), msg)
			}
		})
		b.Run("impl=blst/alg="+alg.String()+"/op=verify", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if s.PublicKey().VerifySignature(msg, sig) != nil {
					b.Fatal("does not verify")
				}
			}
		})
		if alg == signer.BLS12381MinPK {
			k, _ := circlbls.KeyGen[circlbls.KeyG1SigG2](ikm, nil, nil)
			benchCircl(b, alg, k, msg)
		} else {
			k, _ := circlbls.KeyGen[circlbls.KeyG2SigG1](ikm, nil, nil)
			benchCircl(b, alg, k, msg)
		}
	}
}

func benchCircl[K circlbls.KeyGroup](b *testing.B, alg signer.Algorithm, k *circlbls.PrivateKey[K], msg []byte) {
	pub := k.PublicKey()
	sig := circlbls.Sign(k, msg)
	b.Run("impl=circl/alg="+alg.String()+"/op=sign", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			circlbls.Sign(k, msg)
		}
	})
	b.Run("impl=circl/alg="+alg.String()+"/op=verify", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if !circlbls.Verify(pub, msg, sig) {
				b.Fatal("does not verify")
			}
		}
	})
}
