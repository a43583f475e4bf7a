package bench

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"os"
	"sync"

	"github.com/signerkit/signerkit/internal/simtime"
	"github.com/signerkit/signerkit/openpgpcard"
	"github.com/signerkit/signerkit/openpgpcard/cardsim"
	"github.com/signerkit/signerkit/signer"
)

// The OpenPGP card rows, openpgp-<token>-<algorithm>: package openpgpcard
// against cardsim with each token's profile (docs/latency-profiles.md §7),
// one row per signing algorithm the token takes, over the card's in-memory
// transport. The card's time is modeled (accounted, or slept with
// SIGNERKIT_SIM=realtime); the host's — APDU framing, PIN verification,
// the verify of every signature — is measured. The CPU rows beside them
// are raw-go-<algorithm>-sign and raw-go-<algorithm>-decipher
// (openpgpdecipher.go).
func init() {
	for _, p := range cardsim.Profiles() {
		for _, a := range p.Algorithms {
			alg, ok := cardSignerAlgorithm[a]
			if !ok {
				continue // an ECDH key deciphers only
			}
			Register(Backend{Name: "openpgp-" + p.Short() + "-" + a.String(), Algorithm: alg, Traced: true, Open: openCard(p, a)})
		}
	}
	// A real card's signature key, when SIGNERKIT_OPENPGPCARD names its
	// reader ("pcsc" for the first OpenPGP card), PW1 from
	// SIGNERKIT_OPENPGPCARD_PIN.
	Register(Backend{Name: "openpgp-card", Traced: true, Payloads: []int{32, 1024},
		Skip: func() string {
			if os.Getenv(OpenPGPCardEnv) == "" {
				return OpenPGPCardEnv + " is not set: no real OpenPGP card"
			}
			return ""
		},
		Open: func(ctx context.Context, _ Params) (*Instance, error) {
			reader := os.Getenv(OpenPGPCardEnv)
			if reader == "pcsc" {
				reader = ""
			}
			s, err := openpgpcard.Open(ctx, openpgpcard.Config{Reader: reader, PIN: signer.SecretEnv(OpenPGPCardEnv + "_PIN")})
			if err != nil {
				return nil, err
			}
			return FromSigner(s), nil
		}})
}

// OpenPGPCardEnv opts a real OpenPGP card in.
const OpenPGPCardEnv = "SIGNERKIT_OPENPGPCARD"

var cardSignerAlgorithm = map[cardsim.Algorithm]signer.Algorithm{
	cardsim.RSA2048: signer.RSAPKCS1v15, cardsim.RSA4096: signer.RSAPKCS1v15,
	cardsim.ECDSAP256: signer.ECDSAP256, cardsim.EdDSA25519: signer.Ed25519,
}

// cardKeys are generated once per process: a 4096-bit RSA key takes
// seconds, and every row imports the same one.
var cardKeys = map[cardsim.Algorithm]func() (crypto.PrivateKey, error){
	cardsim.RSA2048: sync.OnceValues(func() (crypto.PrivateKey, error) { return rsa.GenerateKey(rand.Reader, 2048) }),
	cardsim.RSA4096: sync.OnceValues(func() (crypto.PrivateKey, error) { return rsa.GenerateKey(rand.Reader, 4096) }),
	cardsim.ECDSAP256: sync.OnceValues(func() (crypto.PrivateKey, error) {
		return ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	}),
	cardsim.EdDSA25519: sync.OnceValues(func() (crypto.PrivateKey, error) {
		_, k, err := ed25519.GenerateKey(rand.Reader)
		return k, err
	}),
}

func openCard(p cardsim.Profile, a cardsim.Algorithm) func(context.Context, Params) (*Instance, error) {
	return func(ctx context.Context, _ Params) (*Instance, error) {
		priv, err := cardKeys[a]()
		if err != nil {
			return nil, err
		}
		card := cardsim.New(cardsim.Config{Profile: p, Time: simtime.ModeFromEnv()})
		if err := card.ImportKey(cardsim.SlotSign, priv); err != nil {
			return nil, err
		}
		s, err := openpgpcard.Open(ctx, openpgpcard.Config{Dial: card.Dialer(), PIN: signer.SecretBytes([]byte(cardsim.DefaultPW1))})
		if err != nil {
			return nil, err
		}
		return FromSigner(s), nil
	}
}
