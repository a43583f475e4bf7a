package privval_test

import (
	"context"
	"crypto"
	"crypto/ed25519"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"path/filepath"

	"github.com/signerkit/signerkit/guard"
	"github.com/signerkit/signerkit/privval"
)

// exampleKey is an Ed25519 key in memory; any signer.Signer will do.
type exampleKey struct{ ed25519.PrivateKey }

func (k exampleKey) Close() error { return nil }
func (k exampleKey) SignContext(_ context.Context, msg []byte) ([]byte, error) {
	return ed25519.Sign(k.PrivateKey, msg), nil
}
func (k exampleKey) Sign(_ io.Reader, msg []byte, _ crypto.SignerOpts) ([]byte, error) {
	return ed25519.Sign(k.PrivateKey, msg), nil
}

// An Endpoint dials a CometBFT v0.38 validator's priv_validator_laddr and
// signs its votes and proposals through a guard. Here the "validator" is a
// Unix socket that sends one PingRequest.
func ExampleEndpoint() {
	dir, err := os.MkdirTemp("", "privval-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	key := exampleKey{ed25519.NewKeyFromSeed(make([]byte, 32))}
	g, err := guard.New(key, guard.Config{Dir: dir, AutoInit: true})
	if err != nil {
		log.Fatal(err)
	}
	defer g.Close()

	// The validator's listener.
	sock := filepath.Join(dir, "privval.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		log.Fatal(err)
	}
	defer ln.Close()

	e, err := privval.NewEndpoint(g, privval.Config{
		Dialect: privval.V038,
		Network: "unix", Address: sock, // over TCP, also set Handshake
		ChainID: "test-chain",
	})
	if err != nil {
		log.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- e.Run(ctx) }()

	// The validator's side: one PingRequest (oneof field 7), its answer.
	conn, err := ln.Accept()
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Write([]byte{2, 7<<3 | 2, 0}); err != nil {
		log.Fatal(err)
	}
	resp := make([]byte, 3)
	if _, err := io.ReadFull(conn, resp); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("PingResponse: %v\n", resp[1] == 8<<3|2)

	cancel()
	<-done
	ping, _ := e.Stats().Phases.Label(privval.LabelPing)
	fmt.Println("pings:", ping.Count)
	// Output:
	// PingResponse: true
	// pings: 1
}

// A Server answers a gno node configured with
// [consensus.priv_validator.remote_signer] server_address.
func ExampleServer() {
	dir, err := os.MkdirTemp("", "privval-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	key := exampleKey{ed25519.NewKeyFromSeed(make([]byte, 32))}
	g, err := guard.New(key, guard.Config{Dir: dir, AutoInit: true})
	if err != nil {
		log.Fatal(err)
	}
	defer g.Close()

	ln, err := net.Listen("unix", filepath.Join(dir, "signer.sock"))
	if err != nil {
		log.Fatal(err)
	}
	s, err := privval.NewServer(g, privval.ServerConfig{ChainID: "test-chain"})
	if err != nil {
		log.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- s.Serve(ctx, ln) }() // Serve closes ln when ctx ends

	// gno's client asks for the public key: an amino Any named
	// /tm.remotesigner.PubKeyRequest.
	conn, err := net.Dial("unix", ln.Addr().String())
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close()
	url := "/tm.remotesigner.PubKeyRequest"
	req := append([]byte{byte(2 + len(url)), 0x0a, byte(len(url))}, url...)
	if _, err := conn.Write(req); err != nil {
		log.Fatal(err)
	}
	resp := make([]byte, 93) // length prefix + PubKeyResponse
	if _, err := io.ReadFull(conn, resp); err != nil {
		log.Fatal(err)
	}
	fmt.Println("public key returned:", string(resp[len(resp)-32:]) == string(key.Public().(ed25519.PublicKey)))
	cancel()
	<-done
	// Output:
	// public key returned: true
}
