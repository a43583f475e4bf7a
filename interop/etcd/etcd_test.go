package etcd

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/signerkit/signerkit/guard"
	"github.com/signerkit/signerkit/guard/etcdstore"
	"github.com/signerkit/signerkit/guard/etcdstore/etcdtest"
	"github.com/signerkit/signerkit/signbytes"
	"github.com/signerkit/signerkit/signer/signertest"
)

const chain = "interop-chain"

func prevote(t *testing.T, h int64, tag byte) []byte {
	t.Helper()
	m := signbytes.Message{Format: signbytes.CometBFT, Phase: signbytes.Prevote, Height: h, ChainID: chain,
		Timestamp: time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC),
		BlockID:   signbytes.BlockID{Hash: bytes.Repeat([]byte{tag}, 32), PartSetHeader: signbytes.PartSetHeader{Total: 1, Hash: bytes.Repeat([]byte{tag}, 32)}}}
	b, err := m.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// setup starts a 3-member etcd v3.7.3 cluster and returns a Guard on it
// through the JSON gateway, and etcd's own Go client on the same cluster.
func setup(t *testing.T) (*guard.Guard, *etcdstore.Store, *clientv3.Client) {
	c := etcdtest.Start(t, 3)
	tlsCfg, err := etcdstore.TLSFiles(c.PKI.CA, c.PKI.ClientCert, c.PKI.ClientKey)
	if err != nil {
		t.Fatal(err)
	}
	s, err := etcdstore.New(etcdstore.Config{Endpoints: c.Endpoints(), Prefix: "/interop", TLS: tlsCfg})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	g, err := guard.New(signertest.NewFake(3), guard.Config{Store: s, AutoInit: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	var eps []string
	for _, m := range c.Members {
		eps = append(eps, m.ClientAddr)
	}
	cli, err := clientv3.New(clientv3.Config{Endpoints: eps, TLS: tlsCfg.Clone(), DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.Close() })
	return g, s, cli
}

// TestClientReadsStore: what the store commits through the gateway is,
// read by etcd's own client, the key Store.Key names, at the version the
// store reports, holding the state the Guard signed from (EncodeValue),
// with a signature that verifies.
func TestClientReadsStore(t *testing.T) {
	g, s, cli := setup(t)
	ctx := context.Background()
	b := prevote(t, 5, 1)
	signed, err := g.SignBytes(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := cli.Get(ctx, s.Key(chain))
	if err != nil || len(resp.Kvs) != 1 {
		t.Fatalf("client/v3 Get: %v, %d keys", err, len(resp.Kvs))
	}
	kv := resp.Kvs[0]
	st, err := etcdstore.DecodeValue(kv.Value, chain, string(kv.Key))
	if err != nil {
		t.Fatal(err)
	}
	_, ver, err := s.Load(ctx, chain)
	if err != nil || ver != uint64(kv.ModRevision) {
		t.Fatalf("store version %d (%v), client's mod revision %d", ver, err, kv.ModRevision)
	}
	pub := g.Public().(ed25519.PublicKey)
	if st.Height != 5 || st.Step != 2 || !bytes.Equal(st.SignBytes, b) || !bytes.Equal(st.Signature, signed.Signature) || !ed25519.Verify(pub, st.SignBytes, st.Signature) {
		t.Fatalf("stored state %+v", st)
	}
}

// TestClientRacesStore: a writer using etcd's own client commits a later
// state (height 9) in a transaction of its own; the Guard, whose view is
// still height 5, loses its compare-and-swap for height 6, drops that
// signature, refuses it, and signs above 9. A value the client writes that
// is not a state makes the chain refuse to sign.
func TestClientRacesStore(t *testing.T) {
	g, s, cli := setup(t)
	ctx := context.Background()
	if _, err := g.SignBytes(ctx, prevote(t, 5, 1)); err != nil {
		t.Fatal(err)
	}
	key := s.Key(chain)
	later := prevote(t, 9, 2)
	sig, _ := signertest.NewFake(3).SignContext(ctx, later)
	cur, err := cli.Get(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	txn, err := cli.Txn(ctx).
		If(clientv3.Compare(clientv3.ModRevision(key), "=", cur.Kvs[0].ModRevision)).
		Then(clientv3.OpPut(key, string(etcdstore.EncodeValue(guard.State{ChainID: chain, Height: 9, Step: 2, SignBytes: later, Signature: sig})))).
		Commit()
	if err != nil || !txn.Succeeded {
		t.Fatalf("client/v3 Txn: %v, %+v", err, txn)
	}
	_, err = g.SignBytes(ctx, prevote(t, 6, 1))
	var ds *guard.DoubleSignError
	if !errors.As(err, &ds) || ds.LastHeight != 9 {
		t.Fatalf("a sign below the state another writer committed: %v", err)
	}
	if _, err := g.SignBytes(ctx, prevote(t, 10, 1)); err != nil {
		t.Fatalf("above it: %v", err)
	}
	if _, err := cli.Put(ctx, key, "not a state"); err != nil {
		t.Fatal(err)
	}
	if _, err := g.SignBytes(ctx, prevote(t, 11, 1)); !errors.As(err, new(*guard.CorruptError)) {
		t.Fatalf("over a damaged value: %v, want a *guard.CorruptError", err)
	}
}

// TestSuitesOnV37: the main module's shared-state tests (the store, the
// active-active guards and daemons, failing closed, the checker's short
// run), which run Debian's etcd 3.4 in make test, run here on etcd v3.7.3.
func TestSuitesOnV37(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go test on the main module")
	}
	cmd := exec.Command("go", "test", "-count=1", "-run", "TestEtcdStore|TestActiveActive|TestFailClosed|TestChecker|TestSharedState",
		"./guard/etcdstore/", "./daemon/")
	cmd.Dir = filepath.Join("..", "..")
	cmd.Env = append(os.Environ(), "SIGNERKIT_REQUIRE_ETCD=1", "SIGNERKIT_ETCD="+os.Getenv("SIGNERKIT_ETCD"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go test on etcd v3.7.3: %v\n%s", err, out)
	}
	t.Logf("%s", out)
}
