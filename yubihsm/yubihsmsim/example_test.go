package yubihsmsim_test

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"log"

	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/yubihsm"
	"github.com/signerkit/signerkit/yubihsm/yubihsmsim"
)

func Example() {
	dev := yubihsmsim.New(yubihsmsim.Config{Time: yubihsmsim.Accounted})
	srv, err := yubihsmsim.NewServer(dev) // a connector on 127.0.0.1
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()

	ctx := context.Background()
	// The simulator's HTTPClient reports its modeled device time on traces
	// and passes deadlines on.
	store, err := yubihsm.OpenStore(ctx, yubihsm.Config{Connector: srv.URL(), Secret: signer.SecretBytes([]byte("password")), HTTPClient: yubihsmsim.HTTPClient()})
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
	ki, err := store.GenerateKey(ctx, signer.ECDSAP256, "tls")
	if err != nil {
		log.Fatal(err)
	}
	k, err := signer.Open(ctx, "yubihsm:connector="+srv.URL()+";id="+ki.ID+"?pin-value=password")
	if err != nil {
		log.Fatal(err)
	}
	defer k.Close()

	// Unplug the device: signs fail with a typed error until it is back.
	dev.Inject(yubihsmsim.FaultUnplugged, 0)
	_, err = k.SignContext(ctx, []byte("hello"))
	fmt.Println("unplugged:", errors.Is(err, signer.ErrDisconnected))
	dev.Clear(yubihsmsim.FaultUnplugged)
	digest := sha256.Sum256([]byte("hello"))
	sig, err := k.Sign(rand.Reader, digest[:], crypto.SHA256) // ASN.1 DER, as crypto.Signer gives it
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("back, verified:", ecdsa.VerifyASN1(k.Public().(*ecdsa.PublicKey), digest[:], sig))

	// Refusals carry the device's error code.
	_, err = store.OpenKey(ctx, signer.KeyRef{ID: "0001"})
	fmt.Println("no key:", errors.Is(err, signer.ErrKeyNotFound))
	if err := store.DeleteKey(ctx, signer.KeyRef{Label: "tls"}); err != nil {
		log.Fatal(err)
	}
	_, err = k.SignContext(ctx, []byte("hello"))
	var de *yubihsm.DeviceError
	fmt.Println("deleted:", errors.As(err, &de) && de.Code == yubihsm.CodeObjectNotFound)
	// Output:
	// unplugged: true
	// back, verified: true
	// no key: true
	// deleted: true
}
