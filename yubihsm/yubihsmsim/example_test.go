package yubihsmsim_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/yubihsm"
	"github.com/signerkit/signerkit/yubihsm/yubihsmsim"
)

func Example() {
	dev := yubihsmsim.New(yubihsmsim.Config{})
	srv, err := yubihsmsim.NewServer(dev) // a connector on 127.0.0.1
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()

	ctx := context.Background()
	c, err := yubihsm.Open(ctx, yubihsm.Config{URL: srv.URL(), Password: []byte("password")})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	ki, err := c.GenerateKey(ctx, signer.ECDSAP256, "tls")
	if err != nil {
		log.Fatal(err)
	}
	k, err := c.Key(ctx, ki.Ref())
	if err != nil {
		log.Fatal(err)
	}
	defer k.Close()

	// Unplug the device: signs fail with a typed error until it is back.
	dev.Inject(yubihsmsim.FaultUnplugged, 0)
	_, err = k.SignContext(ctx, []byte("hello"))
	fmt.Println("unplugged:", errors.Is(err, signer.ErrDisconnected))
	dev.Clear(yubihsmsim.FaultUnplugged)
	sig, err := k.SignContext(ctx, []byte("hello"))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("back, verified:", ki.Algorithm.Verify(k.Public(), []byte("hello"), sig) == nil)
	// Output:
	// unplugged: true
	// back, verified: true
}
