package pkcs11_test

import (
	"context"
	"fmt"
	"log"

	"github.com/signerkit/signerkit/pkcs11"
	"github.com/signerkit/signerkit/signer"
)

func ExampleParseURI() {
	u, err := pkcs11.ParseURI("pkcs11:token=validator;object=consensus;id=%01%a0;type=private" +
		"?module-path=/usr/lib/softhsm/libsofthsm2.so&pin-value=1234")
	if err != nil {
		log.Fatal(err)
	}
	cfg, err := u.Config()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(cfg.Module)
	fmt.Printf("token %q, key %q id %x\n", cfg.TokenLabel, cfg.KeyLabel, cfg.KeyID)
	fmt.Println(u) // String leaves the PIN out
	// Output:
	// /usr/lib/softhsm/libsofthsm2.so
	// token "validator", key "consensus" id 01a0
	// pkcs11:token=validator;object=consensus;type=private;id=%01%A0?module-path=/usr/lib/softhsm/libsofthsm2.so
}

// A key on a YubiHSM 2 through Yubico's module, the PIN (the auth key id
// and password, "0001password") read from a file at each login.
func ExampleOpenURI() {
	ctx := context.Background()
	k, err := pkcs11.OpenURI(ctx, "pkcs11:token=YubiHSM;object=consensus"+
		"?module-path=/usr/lib/x86_64-linux-gnu/pkcs11/yubihsm_pkcs11.so&pin-source=/run/secrets/yubihsm-pin", nil)
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
func ExampleToken_GenerateKey() {
	ctx := context.Background()
	tok, err := pkcs11.Open(ctx, pkcs11.Config{
		Module:     "/usr/lib/softhsm/libsofthsm2.so",
		TokenLabel: "validator",
		PIN:        func() ([]byte, error) { return []byte("1234"), nil },
	})
	if err != nil {
		log.Fatal(err)
	}
	defer tok.Close()
	info, err := tok.GenerateKey(ctx, signer.Ed25519, "consensus")
	if err != nil {
		log.Fatal(err)
	}
	k, err := tok.OpenKey(ctx, info.Ref())
	if err != nil {
		log.Fatal(err)
	}
	defer k.Close()
	fmt.Println(info.Label, info.ID)
}
