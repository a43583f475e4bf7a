package bench

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"sync"

	"github.com/signerkit/signerkit/inprocess"
	"github.com/signerkit/signerkit/signer"
)

// The in-process rows run over LargePayloads, 32 B to 1 MiB: a key in
// this process signs a message of any size (see LargePayloads for why the
// device rows do not).
func init() {
	// The floor: crypto/ed25519 called directly, with nothing around it.
	Register(Backend{
		Name:      "raw-ed25519",
		Algorithm: signer.Ed25519,
		Payloads:  LargePayloads,
		Open: func(context.Context, Params) (*Instance, error) {
			pub, priv, err := ed25519.GenerateKey(rand.Reader)
			if err != nil {
				return nil, err
			}
			return &Instance{
				Sign: func(_ context.Context, msg []byte) ([]byte, error) {
					return ed25519.Sign(priv, msg), nil
				},
				Public: pub,
			}, nil
		},
	})
	for _, alg := range []signer.Algorithm{signer.Ed25519, signer.ECDSAP256, signer.ECDSAP384, signer.ECDSASecp256k1} {
		Register(Backend{Name: "inprocess-" + alg.String(), Algorithm: alg, Open: openGenerated(alg), Validator: alg == signer.Ed25519, Payloads: LargePayloads})
		if alg == signer.Ed25519 {
			// The same key with a collector attached, so tracing's cost is a
			// ratio against the row above in one run.
			Register(Backend{Name: "inprocess-ed25519-traced", Algorithm: alg, Open: openGenerated(alg), Traced: true, Payloads: LargePayloads})
		}
	}
	Register(Backend{Name: "inprocess-rsa2048-pkcs1v15", Algorithm: signer.RSAPKCS1v15, Open: openRSA(signer.RSAPKCS1v15), Payloads: LargePayloads})
	Register(Backend{Name: "inprocess-rsa2048-pss", Algorithm: signer.RSAPSS, Open: openRSA(signer.RSAPSS), Payloads: LargePayloads})
}

func openGenerated(alg signer.Algorithm) func(context.Context, Params) (*Instance, error) {
	return func(context.Context, Params) (*Instance, error) {
		k, err := inprocess.Generate(alg)
		if err != nil {
			return nil, err
		}
		return FromSigner(k), nil
	}
}

// rsaKey is generated once: a 2048-bit key takes ~100 ms to make, longer
// than many rows take to measure.
var rsaKey = sync.OnceValues(func() (*rsa.PrivateKey, error) {
	return rsa.GenerateKey(rand.Reader, 2048)
})

func openRSA(alg signer.Algorithm) func(context.Context, Params) (*Instance, error) {
	return func(context.Context, Params) (*Instance, error) {
		priv, err := rsaKey()
		if err != nil {
			return nil, err
		}
		k, err := inprocess.FromPrivateKey(priv, alg)
		if err != nil {
			return nil, err
		}
		return FromSigner(k), nil
	}
}
