package bench

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"fmt"
	"os"
	"sync"

	"github.com/signerkit/signerkit/pkcs11"
	"github.com/signerkit/signerkit/pkcs11/pkcs11test"
	"github.com/signerkit/signerkit/signer"
)

// The PKCS#11 rows sign on a real SoftHSM2 token. Each row makes a
// throwaway token, imports a key made once per process in Go (SoftHSM2
// would take seconds to generate an RSA-4096 key for every row), and
// removes the token when the row closes.
func init() {
	for _, r := range []struct {
		name string
		alg  signer.Algorithm
		bits int
	}{
		{"ed25519", signer.Ed25519, 0},
		{"p256", signer.ECDSAP256, 0},
		{"rsa2048", signer.RSAPKCS1v15, 2048},
		{"rsa4096", signer.RSAPKCS1v15, 4096},
	} {
		Register(Backend{
			Name:      "pkcs11-softhsm-" + r.name,
			Algorithm: r.alg,
			Open:      openSoftHSM(r.alg, r.bits),
			Traced:    true,
			Validator: r.alg == signer.Ed25519,
			Skip:      skipSoftHSM,
		})
	}
	registerRealToken()
	// The floor for the rows above: github.com/miekg/pkcs11 on one logged-in
	// session, C_SignInit + C_Sign with CKM_EDDSA, nothing around them.
	Register(Backend{
		Name:      "raw-pkcs11-softhsm-ed25519",
		Algorithm: signer.Ed25519,
		Open:      openRawSoftHSM,
		Skip:      skipSoftHSM,
	})
}

// skipSoftHSM skips the rows where SoftHSM2 cannot run, unless
// SIGNERKIT_REQUIRE_SOFTHSM is set, in which case they run and fail.
func skipSoftHSM() string {
	if why := pkcs11test.Available(); why != "" && os.Getenv(pkcs11test.EnvRequire) == "" {
		return "SoftHSM2 not available: " + why
	}
	return ""
}

// softHSMKeys are made once per process, on first use.
var softHSMKeys = struct {
	sync.Mutex
	m map[string]crypto.Signer
}{m: map[string]crypto.Signer{}}

func softHSMKey(alg signer.Algorithm, bits int) (crypto.Signer, error) {
	softHSMKeys.Lock()
	defer softHSMKeys.Unlock()
	name := fmt.Sprintf("%v-%d", alg, bits)
	if k := softHSMKeys.m[name]; k != nil {
		return k, nil
	}
	var k crypto.Signer
	var err error
	switch {
	case alg == signer.Ed25519:
		_, k, err = ed25519.GenerateKey(rand.Reader)
	case alg == signer.ECDSAP256:
		k, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	case alg.IsRSA() && bits == 4096:
		k, err = pkcs11test.RSA4096() // seconds saved, at random
	case alg.IsRSA():
		k, err = rsa.GenerateKey(rand.Reader, bits)
	default:
		err = fmt.Errorf("bench: no SoftHSM2 key for %v", alg)
	}
	if err != nil {
		return nil, err
	}
	softHSMKeys.m[name] = k
	return k, nil
}

// softHSMToken makes a token holding the key for alg under the label
// "bench"; remove deletes it.
func softHSMToken(alg signer.Algorithm, bits int) (*pkcs11test.Token, func(), error) {
	priv, err := softHSMKey(alg, bits)
	if err != nil {
		return nil, nil, err
	}
	tok, remove, err := pkcs11test.CreateTemp("bench")
	if err != nil {
		return nil, nil, err
	}
	if err := tok.ImportPKCS8(priv, "bench", []byte{0xbe}); err != nil {
		remove()
		return nil, nil, err
	}
	return tok, remove, nil
}

func openSoftHSM(alg signer.Algorithm, bits int) func(context.Context, Params) (*Instance, error) {
	return func(ctx context.Context, _ Params) (*Instance, error) {
		tok, remove, err := softHSMToken(alg, bits)
		if err != nil {
			return nil, err
		}
		cfg := tok.Config()
		cfg.KeyLabel = "bench"
		cfg.Algorithm = alg
		k, err := pkcs11.OpenKey(ctx, cfg)
		if err != nil {
			remove()
			return nil, err
		}
		inst := FromSigner(k)
		inst.Close = func() error {
			err := k.Close()
			remove()
			return err
		}
		return inst, nil
	}
}

func openRawSoftHSM(context.Context, Params) (*Instance, error) {
	tok, remove, err := softHSMToken(signer.Ed25519, 0)
	if err != nil {
		return nil, err
	}
	raw, err := tok.OpenRaw("bench")
	if err != nil {
		remove()
		return nil, err
	}
	priv, _ := softHSMKey(signer.Ed25519, 0)
	return &Instance{
		Sign: func(_ context.Context, msg []byte) ([]byte, error) {
			return raw.Sign(pkcs11.CKM_EDDSA, msg)
		},
		Public: priv.Public(),
		Close: func() error {
			err := raw.Close()
			remove()
			return err
		},
	}, nil
}

// registerRealToken adds the row pkcs11-token, on the key of a real token
// that SIGNERKIT_PKCS11_URI names (see pkcs11test.RealToken), when it is
// set. Its algorithm is the opened key's, so registering logs in to
// nothing; a URI that does not parse still registers the row, which then
// fails with the reason, since the user asked for it.
func registerRealToken() {
	cfg, ok, err := pkcs11test.RealToken()
	if !ok {
		return
	}
	Register(Backend{
		Name: "pkcs11-token",
		// Algorithm zero: the key's is known once it is opened, so nothing
		// logs in to the token at start-up.
		Traced: true,
		Open: func(ctx context.Context, _ Params) (*Instance, error) {
			if err != nil {
				return nil, fmt.Errorf("%s: %w", pkcs11test.EnvURI, err)
			}
			k, err := pkcs11.OpenKey(ctx, cfg)
			if err != nil {
				return nil, err
			}
			return FromSigner(k), nil
		},
	})
}
