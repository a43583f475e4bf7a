package bench

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
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
		k, err = fixedRSA4096() // seconds saved, at random
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
		cfg.Key = signer.KeyRef{Label: "bench", Algorithm: alg}
		k, err := pkcs11.Open(ctx, cfg)
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
			return raw.Sign(msg) // CKM_EDDSA, the key being Ed25519
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
			k, err := pkcs11.Open(ctx, cfg)
			if err != nil {
				return nil, err
			}
			return FromSigner(k), nil
		},
	})
}

// fixedRSA4096 returns the key of the rsa4096 row: a fixed one, since
// generating a 4096-bit key takes seconds, a random number of them (a
// minute under the race detector). It is public, in this source: never use
// it for anything but benchmarks.
func fixedRSA4096() (*rsa.PrivateKey, error) {
	block, _ := pem.Decode([]byte(rsa4096PEM))
	if block == nil {
		return nil, fmt.Errorf("bench: the fixed RSA-4096 key is not PEM")
	}
	k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("bench: the fixed RSA-4096 key: %w", err)
	}
	rk, ok := k.(*rsa.PrivateKey)
	if !ok || rk.N.BitLen() != 4096 {
		return nil, fmt.Errorf("bench: the fixed RSA-4096 key is a %T", k)
	}
	return rk, nil
}

// rsa4096PEM is the same key as pkcs11/testdata/rsa4096.pem.
const rsa4096PEM = `-----BEGIN PRIVATE KEY-----
MIIJQwIBADANBgkqhkiG9w0BAQEFAASCCS0wggkpAgEAAoICAQC0bi8pABHZvGm2
r48ohajhk46BYoFAPGNbK7R4iqUVRNIz+fHmoOAOXtyTTk37hpsHGl/5W4afri5i
cD8Iuvb6bHNxUG7PEiB3f7XtESF/7cKsRY7Icv4TWLK61eRYS6Vdq2AKJ5vyqMG3
KzTerIrARH/P3SuhbDT6f7qL5i1a3LOpRcpFewTF9CfFB/SX4nkpobd2Y+MNRLTf
2x/gtM9bXygOnVDYEUHqW0+hBnfLdx5Xd+7XIKRia/QLYtfAPW/nM3ZZob/7R542
xYz6H6NygKYEScl4+G+aPH+rXp6seKmZCbyIjqCvQwz1FZL5gNLpoZrgJ11VzEmT
K1UMznQPRVfGWbgL1IACQHm44dx/dB8btou/Ng8p6kYCNVMbtQXcVQjvcG7wXmnE
9bwMmRlxbMzcqFXO7pBn8LXcPsCpDjnS18Q9e4QqHI4XA9U6LSfWoOVR/mHBEvYF
u7knqYCqge0N+CJyTEupofncfC34CnvzbM5DE5y9m31205NbmEncAcLzHMPWdPZj
YVFwONjneBIKQ/jBOCNd11uWY7c847tIk2tqlrxu4Cz/taR040wBtH4cRCYhemKJ
kZ5/KtIzPUwnDj/hlRjWlXMOHBSe0lie3jWkXkd8N3tX5oP3Q1QTkbpxTgu1QGiw
vKuweu1ZYVa1xA15gSI7ominM7YMjQIDAQABAoICAAF8lu7jjUIaB1T2BVv0Hfwd
1yLByQbaeIcbyRTlL48JTiIXgSLBWJdFuNON5Z6Y8VYRpZDMbEOMj91Hx30u7TIL
Crh4TTFvmMzjRIB7j6caMmxw9kg4ildmd7KKaKNBnE81RklPIj3RnicAOCNNkKcc
6WCxFdbyqU0XGFZmwyDoiKJwbMY9yUBITruU4TMPLqhlKLnVAN3vHv5pM84KL1s1
YYMdULk3Cy//KJzPDNWkWZ+m4VTsc+5LrWsamWSAHRfumJ8MciSD5o3U+uBkulgL
L1MBuKNCiMjgjry+vtf09pDIP8FwS2qmRskOMHPV1+cM6dXG/UHjuQd5Z+3/FX23
ISdm71/St+dzUxSWg9fnztr9RTUh48ZauS4Tswg0JLFW9BssLKrxlYfKbzzUnGK0
Cir67q8DoN8+K/rXwO+aFXtKqCrwK3rC9j+REGgKcoQ6IvrdXcKocDa+tA0f3/w3
9mUil+IPbFw7kIJa4N+zcUTT1kLoXhiZrO2wsG/BrnBSEg8U5LDeRUAO7ZAOst59
RZbDf8phjwvWG3+ygZ4fTQNXdwp6354q+NkHLZa+Kd65BiQmmw4AY/AjF5GvLNJe
UYkRI0pzW4JE9vc/47nt/KxpJ3nLqia3cnrQVt2tnqFARDcmJElntRBxeo7Zf1wH
GiFT95uuEOazTH3JQ4eRAoIBAQD+C7N9O3lpV3keLVIMH+IKtZAjsy6nY4ECI4YM
Ma9A1Vw1GzYdEpnwG4kn4IMy7F/j7VCcYgzkC5AApyo+Ia2kx0nQg55aZuYY2zuQ
fevpidjmObZcgKg5yy9s/kVilJlc/7GK4k8J+Ev/3Vtfy/zfcgk1iM7OhFYoUoGi
KSWaiVVURj73AF4rq2qFrCoHKUFQLOHozVXlTDFG9LUDFzqYaeKMI93SKweyFEw/
E89fXYbtEyDcAeQNAJFWNAhRkX/mAX3HiJYIIRP+s4iBwSVGVN3HBpVKQ3onclmw
ObdzfvM53pclDsqJZZi56x+4K8zMeFlu0KSg1/UKf5bdJ9R3AoIBAQC10YKzWSGL
hlKBz0miVRFAR/tlPdNbClve37w3xnKIn63Ns9O9oQW4CVCuFMYnBZJH/HTFABv3
nCJYuOGJQl575Y6mzDD78ELbZc6AoLzK8CkIy17JZ7j9u1fE3v7Bp8GGS6fPYBCf
/jIN2TlXiJSeQMeO7tHWol/5FIDAhnGrK6p3Q0TDQ5U5HkDVMC9QiSju+BqQ84kG
T+AqUSph5d+5tou6TFETN8iPRjZLmx0ZcszYEzILmYW/5nXY8qEpmv20QXiZ+8HD
CA43WQUyg+qDMgZjFuep2SkgiN6I7kVFQcAnwZTGpebs1YLk4osLqhINNWLsf16D
GJvU+Z26b3wbAoIBAQDtKQVFysjcI5HpLwviT71YnAjUmwjZsRWVZo5UQenGj6gF
18Jbv6q/sSUIehpg5rPZ9wiDBTHdjkG/qk7QM+aD5putMcIZyOfTmo5vpG4g1dQL
kSMCFgV19o3upS0nC2xkmjsnWX/J4ecpFH+h3a/S9QVN2cqeloJMIEHunZUCQGTN
SMqtEcXX5K2L3p5ZkxTrAQtgppgieE+kWvvEx+GmuWqJw03oTs1fXH2VgSvdblVw
aqQJXyaDUN1c6TQ+2aLZmNjP9l2Bd0fQRdAQubvPfZiQnT+vVXDq9GBwGGF/S6tK
gdb9/GHthE/geHRjHViSJWPwBI07rn+Obm/rQ6yfAoIBAHm2pygooqwkX1dGzKQ/
Di1aApDjsnlfleC9JeKwljufqVnq5/QptwpcMgZXIc89i49lEUZPrGk1vEhoe5LH
Ozj1k2lVh/UgAaGdpX+2Gqw/2Thp7ConpU81+qtwHFrHUmX0f4HzbS2tnRRoNlrC
s7q84tpsRUzJpjW34/j+B1nvAU6VWZLdyydReVU9zG69YwmWTTJ71V7EWev6KcUf
fYV1DlTIgf27eidveSljzTccAsUjFH1vaHnubTWuNvUDLJNewL1UK4HEAsBKd5A5
fuQUuPHcg3jQRxfgiBhiaTzTpy72CAJzTQN+awGOJkbIswzkkDSBj2NzNd58u3ny
58ECggEBAOrjraPCamVhcZi+WBOaqfEMpeU5hXo7oRWwTGLXyPYydYhTldkwN9/h
EyEa21CwrPlYOR8PRPv8jmS4hXdzls60cZ8pS/HOYrsQFQdmC4yqf4WT7NP/eqnH
NKFeKJDAdhFHNQ2YRviGfJRpYNnEZcb+B3BVJ4So1PbVS6Zyo0YRJrcNMWXG8A7H
qINT+R/zXtx2P7TVC6NcqZQ9XlM0a1IBXft3O1IbwClFCvKxg5mX0Ynmvk8ksPRK
ER3CLGGGTzrNcaR33VqvZHfhk2MxzhChFlWkZ8WVWQkK+plaksDVUc7fSzP4PlIT
8JWdepLD46Mb72nZDBsc86+phwDoyWE=
-----END PRIVATE KEY-----
`
