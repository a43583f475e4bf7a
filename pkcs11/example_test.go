package pkcs11_test

import (
	"context"
	"fmt"
	"log"

	"github.com/signerkit/signerkit/pkcs11"
	"github.com/signerkit/signerkit/signer"
)

func ExampleParseURI() {
	cfg, err := pkcs11.ParseURI("pkcs11:token=validator;object=consensus;id=%01%a0;type=private" +
		"?module-path=/usr/lib/softhsm/libsofthsm2.so&pin-source=env:TOKEN_PIN")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(cfg.Module)
	fmt.Printf("token %q, key %v, PIN read at login: %v\n", cfg.TokenLabel, cfg.Key, cfg.Secret != nil)

	_, err = pkcs11.ParseURI("pkcs11:token=validator;slot-id=0x1")
	fmt.Println(err)
	// Output:
	// /usr/lib/softhsm/libsofthsm2.so
	// token "validator", key "consensus" id 01a0, PIN read at login: true
	// pkcs11: URI: attribute slot-id: "0x1" is not a decimal number that fits a CK_SLOT_ID
}

func ExampleDecodeURI() {
	u, err := pkcs11.DecodeURI("pkcs11:object=consensus;token=validator?pin-value=1234&module-name=softhsm2")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(u.Token, u.Object, u.ModuleName)
	fmt.Println(u) // String leaves the PIN out
	// Output:
	// validator consensus softhsm2
	// pkcs11:token=validator;object=consensus?module-name=softhsm2
}

// A key on a SoftHSM2 token opened from a URI through package signer,
// which knows the pkcs11 scheme once this package is imported. The PIN is
// read from the environment variable TOKEN_PIN at each login.
func Example_signerOpen() {
	ctx := context.Background()
	s, err := signer.Open(ctx, "pkcs11:token=validator;object=consensus"+
		"?module-path=/usr/lib/softhsm/libsofthsm2.so&pin-source=env:TOKEN_PIN")
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	msg := []byte("message")
	sig, err := s.SignContext(ctx, msg)
	if err != nil {
		log.Fatal(err)
	}
	alg, _ := signer.AlgorithmOf(s)
	fmt.Println(alg.Verify(s.Public(), msg, sig) == nil)
}

// A key on a YubiHSM 2 through Yubico's module, the PIN (the auth key id
// and password, "0001password") read from a file at each login.
func ExampleOpen() {
	ctx := context.Background()
	k, err := pkcs11.Open(ctx, pkcs11.Config{
		Module:     "/usr/lib/x86_64-linux-gnu/pkcs11/yubihsm_pkcs11.so",
		TokenLabel: "YubiHSM",
		Key:        signer.KeyRef{Label: "consensus"},
		Secret:     signer.SecretFile("/run/secrets/yubihsm-pin"),
	})
	if err != nil {
		log.Fatal(err)
	}
	defer k.Close()
	sig, err := k.SignContext(ctx, []byte("message"))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%v signature of %d bytes\n", k.Algorithm(), len(sig))
}

// Generate a key on a token, then sign with it.
func ExampleStore_GenerateKey() {
	ctx := context.Background()
	st, err := pkcs11.OpenStore(ctx, pkcs11.Config{
		Module:     "/usr/lib/softhsm/libsofthsm2.so",
		TokenLabel: "validator",
		Secret:     signer.SecretEnv("TOKEN_PIN"),
	})
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()
	info, err := st.GenerateKey(ctx, signer.Ed25519, "consensus")
	if err != nil {
		log.Fatal(err)
	}
	k, err := st.OpenKey(ctx, info.Ref())
	if err != nil {
		log.Fatal(err)
	}
	defer k.Close()
	fmt.Println(info.Label, info.ID)
}
