package daemon_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/signerkit/signerkit/daemon"
	"github.com/signerkit/signerkit/guard"
	"github.com/signerkit/signerkit/inprocess"
	"github.com/signerkit/signerkit/privval/privvaltest"
	"github.com/signerkit/signerkit/signbytes"
	"github.com/signerkit/signerkit/signer"
)

// A program embeds the daemon as cmd/signerkit does: a config, New, Run.
// Here a gno node dials it over a Unix socket (tm2-remote) and asks for a
// prevote; the key is made in memory and the double-sign state is kept in
// memory too, where a real daemon keeps both on disk.
func Example() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	dir, err := os.MkdirTemp("", "signerkit-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	sock := filepath.Join(dir, "signer.sock")

	cfg, err := daemon.ParseConfig([]byte(`
state_dir = "` + dir + `"

[[chain]]
id = "test11"
protocol = "tm2-remote"
key = "inprocess:file=/etc/signerkit/validator.pem"

  [[chain.validator]]
  addr = "unix://` + sock + `"
`))
	if err != nil {
		log.Fatal(err)
	}

	// The chain's state must exist before the daemon starts: it never
	// starts a chain from nothing (signerkit state init does this).
	state := new(guard.MemFS)
	if err := daemon.InitStateFS(ctx, state, "test11", 1); err != nil {
		log.Fatal(err)
	}
	d, err := daemon.New(ctx, cfg, daemon.Options{
		StateFS: state,
		Open: func(ctx context.Context, uri string) (signer.Signer, error) {
			return inprocess.Generate(signer.Ed25519) // instead of signer.Open(ctx, uri)
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()

	// The node's side: dial the socket, ask for the key and a prevote.
	var node *privvaltest.NativeClient
	for range 100 { // Run listens soon after it starts
		if node, err = privvaltest.DialNative(ctx, "unix", sock, nil); err == nil {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err != nil {
		log.Fatal(err)
	}
	defer node.Close()
	pub, err := node.PubKey(ctx)
	if err != nil {
		log.Fatal(err)
	}
	vote, err := signbytes.Message{
		Format:    signbytes.TM2,
		Phase:     signbytes.Prevote,
		Height:    1,
		BlockID:   signbytes.BlockID{Hash: bytes.Repeat([]byte{0xab}, 32), PartSetHeader: signbytes.PartSetHeader{Total: 1, Hash: bytes.Repeat([]byte{0xcd}, 32)}},
		Timestamp: time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC),
		ChainID:   "test11",
	}.Bytes()
	if err != nil {
		log.Fatal(err)
	}
	sig, err := node.Sign(ctx, vote)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("prevote signed:", ed25519.Verify(pub, vote, sig))

	// The same height, round and step again with other bytes is refused.
	other := bytes.Replace(vote, bytes.Repeat([]byte{0xab}, 32), bytes.Repeat([]byte{0xef}, 32), 1)
	_, err = node.Sign(ctx, other)
	fmt.Println("conflicting prevote refused:", err != nil)

	cancel() // Run stops gracefully
	if err := <-done; err != nil {
		log.Fatal(err)
	}
	// Output:
	// prevote signed: true
	// conflicting prevote refused: true
}
