package etcdstore_test

import (
	"context"
	"fmt"
	"log"

	"github.com/signerkit/signerkit/guard"
	"github.com/signerkit/signerkit/guard/etcdstore"
	"github.com/signerkit/signerkit/inprocess"
	"github.com/signerkit/signerkit/signer"
)

// A Guard whose state is in etcd. Every signer host runs the same, with
// its own copy of the key (or its own HSM holding it) and its own client
// certificate; they share the prefix.
func Example() {
	cfg, err := etcdstore.ParseURL("etcd://10.0.0.1:2379,10.0.0.2:2379,10.0.0.3:2379/signerkit/val1" +
		"?ca=/etc/signerkit/etcd-ca.pem&cert=/etc/signerkit/etcd-client.pem&key=/etc/signerkit/etcd-client-key.pem")
	if err != nil {
		log.Fatal(err)
	}
	store, err := etcdstore.New(cfg)
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
	key, err := inprocess.Generate(signer.Ed25519)
	if err != nil {
		log.Fatal(err)
	}
	g, err := guard.New(key, guard.Config{Store: store})
	if err != nil {
		log.Fatal(err)
	}
	defer g.Close()
	// Once, from any one host: the chain's first state.
	if err := g.Init(context.Background(), "test11", 100); err != nil {
		log.Fatal(err)
	}
}

func ExampleParseURL() {
	cfg, err := etcdstore.ParseURL("etcd+http://127.0.0.1:2379,127.0.0.1:22379/signerkit/val1")
	if err != nil {
		log.Fatal(err)
	}
	s, err := etcdstore.New(cfg)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(s.Name())
	fmt.Println(s.Key("test11"))
	// Output:
	// etcd://127.0.0.1:2379,127.0.0.1:22379/signerkit/val1
	// /signerkit/val1/chain/test11
}
