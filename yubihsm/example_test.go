package yubihsm_test

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"fmt"
	"log"
	"net/http/httptest"
	"os"

	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/yubihsm"
	"github.com/signerkit/signerkit/yubihsm/yubihsmsim"
)

// Open a key from one string with signer.Open, as a validator's
// configuration would name it. Importing the yubihsm package registers
// the yubihsm: scheme.
func Example() {
	// A simulated YubiHSM 2 behind a connector; use the URL of a real
	// yubihsm-connector (http://127.0.0.1:12345 by default) instead.
	dev := yubihsmsim.New(yubihsmsim.Config{})
	connector := httptest.NewServer(dev.Handler())
	defer connector.Close()
	// The password of authentication key 1; a service manager would set
	// it, or name a file with pin-source=/run/secrets/hsm.
	os.Setenv("EXAMPLE_YUBIHSM_PASSWORD", "password")
	defer os.Unsetenv("EXAMPLE_YUBIHSM_PASSWORD")

	// Once, to provision: generate a key inside the device.
	ctx := context.Background()
	store, err := yubihsm.OpenStore(ctx, yubihsm.Config{Connector: connector.URL, Secret: signer.SecretEnv("EXAMPLE_YUBIHSM_PASSWORD")})
	if err != nil {
		log.Fatal(err)
	}
	if _, err := store.GenerateKey(ctx, signer.Ed25519, "validator"); err != nil {
		log.Fatal(err)
	}
	store.Close()

	// Then, to sign: open the key by its label.
	k, err := signer.Open(ctx, "yubihsm:connector="+connector.URL+";auth-key=1;label=validator;algorithm=ed25519?pin-source=env:EXAMPLE_YUBIHSM_PASSWORD")
	if err != nil {
		log.Fatal(err)
	}
	defer k.Close()
	vote := []byte("prevote at height 42")
	sig, err := k.SignContext(ctx, vote)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%T verified: %v\n", k, ed25519.Verify(k.Public().(ed25519.PublicKey), vote, sig))
	// Output:
	// *yubihsm.Signer verified: true
}

// Manage keys through a Store, and open one as a *yubihsm.Signer with
// Open.
func ExampleOpen() {
	dev := yubihsmsim.New(yubihsmsim.Config{})
	connector := httptest.NewServer(dev.Handler())
	defer connector.Close()

	ctx := context.Background()
	cfg := yubihsm.Config{Connector: connector.URL, Secret: signer.SecretBytes([]byte("password"))}
	store, err := yubihsm.OpenStore(ctx, cfg)
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
	ki, err := store.GenerateKey(ctx, signer.ECDSAP256, "tls")
	if err != nil {
		log.Fatal(err)
	}

	cfg.Key = ki.Ref() // by object id
	k, err := yubihsm.Open(ctx, cfg)
	if err != nil {
		log.Fatal(err)
	}
	defer k.Close()
	// A *yubihsm.Signer is a crypto.Signer too: it signs a digest, and
	// returns ECDSA signatures in ASN.1 DER, as crypto/tls and crypto/x509
	// expect.
	digest := sha256.Sum256([]byte("hello"))
	sig, err := k.Sign(rand.Reader, digest[:], crypto.SHA256)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("label:", k.Label())
	fmt.Println("algorithm:", k.Algorithm())
	fmt.Println("verified:", ecdsa.VerifyASN1(k.Public().(*ecdsa.PublicKey), digest[:], sig))
	// Output:
	// label: tls
	// algorithm: p256
	// verified: true
}

func ExampleParseURI() {
	cfg, err := yubihsm.ParseURI("yubihsm:connector=http://127.0.0.1:12345;auth-key=2;id=0x0a01;algorithm=ed25519?pin-source=/run/secrets/hsm&sessions=2")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("connector:", cfg.Connector)
	fmt.Println("auth key:", cfg.AuthKeyID)
	fmt.Println("key:", cfg.Key)
	fmt.Println("sessions:", cfg.Sessions)

	_, err = yubihsm.ParseURI("yubihsm:id=0a01;sessions=2")
	fmt.Println(err)
	// Output:
	// connector: http://127.0.0.1:12345
	// auth key: 2
	// key: id 0a01 as ed25519
	// sessions: 2
	// yubihsm: URI: attribute sessions: belongs in the query of the URI
}
