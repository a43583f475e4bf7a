package threshold_test

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"

	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/threshold"
	"github.com/signerkit/signerkit/threshold/dkls23"
	"github.com/signerkit/signerkit/threshold/thresholdtest"
)

// A 2-of-3 DKLS23 secp256k1 key: the coordinator holds share 1 and signs
// with party 2, served on loopback over mutual TLS. The signature is the
// 64-byte low-S r‖s over SHA-256 that gno and Cosmos verify.
func ExampleNewDKLS23Signer() {
	shares, err := dkls23.Deal(2, 3, nil)
	if err != nil {
		panic(err)
	}
	ca, err := thresholdtest.NewCA()
	if err != nil {
		panic(err)
	}
	partyCert, err := ca.Cert("party-2", false)
	if err != nil {
		panic(err)
	}
	party, err := threshold.NewDKLS23Party(threshold.DKLS23PartyConfig{Share: shares[1],
		Coordinators: []string{"coordinator-1"},
		TLS:          &tls.Config{Certificates: []tls.Certificate{partyCert}, ClientCAs: ca.Pool()}})
	if err != nil {
		panic(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	go party.Serve(l)
	defer party.Close()

	coordCert, err := ca.Cert("coordinator-1", true)
	if err != nil {
		panic(err)
	}
	s, err := threshold.NewDKLS23Signer(threshold.DKLS23Config{Local: shares[0],
		Parties: []threshold.Remote{{ID: 2, Addr: l.Addr().String(), ServerName: "party-2"}},
		TLS:     &tls.Config{Certificates: []tls.Certificate{coordCert}, RootCAs: ca.Pool()}})
	if err != nil {
		panic(err)
	}
	defer s.Close()

	msg := []byte("a gno transaction's sign bytes")
	sig, err := s.SignContext(context.Background(), msg)
	if err != nil {
		panic(err)
	}
	fmt.Println(len(sig), signer.ECDSASecp256k1.Verify(s.Public(), msg, sig) == nil)
	// Output: 64 true
}
