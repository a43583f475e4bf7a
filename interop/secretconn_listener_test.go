package interop

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"errors"
	"io"
	"net"
	"testing"
	"time"

	cmted25519 "github.com/cometbft/cometbft/crypto/ed25519"
	cmtprivval "github.com/cometbft/cometbft/privval"
	"github.com/gnolang/gno/tm2/pkg/bft/privval/signer/remote"
	"github.com/gnolang/gno/tm2/pkg/bft/privval/upstream"
	gnoed25519 "github.com/gnolang/gno/tm2/pkg/crypto/ed25519"

	"github.com/signerkit/signerkit/internal/secretconn"
)

// The nodes' own entry points, not just their handshake functions: gno's
// tmkms listener (upstream.TCPListener, with its allow-list), CometBFT's
// privval TCPListener, and gno's remote-signer TCP setup
// (remote.ConfigureTCPConnection, with its authorized keys).

func pingPong(t *testing.T, ours *secretconn.Conn, theirs net.Conn) {
	t.Helper()
	msg := bytes.Repeat([]byte("signerkit"), 300) // 2700 bytes, 3 frames
	go ours.Write(msg)
	got := make([]byte, len(msg))
	if _, err := io.ReadFull(theirs, got); err != nil || !bytes.Equal(got, msg) {
		t.Fatalf("to the node: %v", err)
	}
	go theirs.Write(msg[:1000])
	if _, err := io.ReadFull(ours, got[:1000]); err != nil || !bytes.Equal(got[:1000], msg[:1000]) {
		t.Fatalf("from the node: %v", err)
	}
}

// dialAndShake dials addr and runs our handshake.
func dialAndShake(addr string, id ed25519.PrivateKey, v secretconn.Variant) (*secretconn.Conn, error) {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	sc, err := secretconn.Handshake(ctx, c, id, v)
	if err != nil {
		c.Close()
	}
	return sc, err
}

type acceptResult struct {
	c   net.Conn
	err error
}

func TestSecretConnGnoTmkmsListener(t *testing.T) {
	signerKey := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{0x11}, 32))
	nodeKey := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{0x22}, 32))
	var allowed gnoed25519.PubKeyEd25519
	copy(allowed[:], signerKey.Public().(ed25519.PublicKey))

	for _, tc := range []struct {
		name    string
		id      ed25519.PrivateKey
		allowed bool
	}{{"allowed", signerKey, true}, {"not allowed", ed25519.NewKeyFromSeed(bytes.Repeat([]byte{0x33}, 32)), false}} {
		t.Run(tc.name, func(t *testing.T) {
			tl, err := net.ListenTCP("tcp", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
			if err != nil {
				t.Fatal(err)
			}
			ln := upstream.NewTCPListener(tl, gnoed25519.PrivKeyEd25519(nodeKey), []gnoed25519.PubKeyEd25519{allowed})
			defer ln.Close()
			ch := make(chan acceptResult, 1)
			go func() {
				c, err := ln.Accept()
				ch <- acceptResult{c, err}
			}()
			sc, err := dialAndShake(tl.Addr().String(), tc.id, secretconn.Merlin)
			if err != nil {
				t.Fatal(err)
			}
			defer sc.Close()
			if !sc.RemotePubKey().Equal(nodeKey.Public()) {
				t.Fatalf("node key seen as %x", sc.RemotePubKey())
			}
			r := <-ch
			if !tc.allowed {
				if r.err == nil {
					r.c.Close()
					t.Fatal("gno's listener accepted a key not in allowed_kms_pubkeys")
				}
				return
			}
			if r.err != nil {
				t.Fatal(r.err)
			}
			defer r.c.Close()
			pingPong(t, sc, r.c)
		})
	}
}

func TestSecretConnCometBFTListener(t *testing.T) {
	nodeKey := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{0x44}, 32))
	signerKey := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{0x55}, 32))
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln := cmtprivval.NewTCPListener(l, cmted25519.PrivKey(nodeKey))
	defer ln.Close()
	ch := make(chan acceptResult, 1)
	go func() {
		c, err := ln.Accept()
		ch <- acceptResult{c, err}
	}()
	sc, err := dialAndShake(l.Addr().String(), signerKey, secretconn.Merlin)
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	if !sc.RemotePubKey().Equal(nodeKey.Public()) {
		t.Fatalf("node key seen as %x", sc.RemotePubKey())
	}
	r := <-ch
	if r.err != nil {
		t.Fatal(r.err)
	}
	defer r.c.Close()
	pingPong(t, sc, r.c)
}

// gno's node dials the remote signer; we are the signer, accepting.
func TestSecretConnGnoRemoteSigner(t *testing.T) {
	nodeKey := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{0x66}, 32))
	signerKey := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{0x77}, 32))
	var authorized gnoed25519.PubKeyEd25519
	copy(authorized[:], signerKey.Public().(ed25519.PublicKey))

	for _, tc := range []struct {
		name string
		auth []gnoed25519.PubKeyEd25519
		ok   bool
	}{{"authorized", []gnoed25519.PubKeyEd25519{authorized}, true}, {"unauthorized", []gnoed25519.PubKeyEd25519{{1}}, false}} {
		t.Run(tc.name, func(t *testing.T) {
			l, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			ch := make(chan acceptResult, 1)
			go func() {
				c, err := net.Dial("tcp", l.Addr().String())
				if err != nil {
					ch <- acceptResult{nil, err}
					return
				}
				sc, err := remote.ConfigureTCPConnection(c.(*net.TCPConn), gnoed25519.PrivKeyEd25519(nodeKey), tc.auth,
					remote.TCPConnConfig{HandshakeTimeout: 5 * time.Second})
				if err != nil {
					c.Close()
				}
				ch <- acceptResult{sc, err}
			}()
			c, err := l.Accept()
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			sc, err := secretconn.Handshake(ctx, c, signerKey, secretconn.PreMerlin)
			if err != nil {
				t.Fatal(err)
			}
			defer sc.Close()
			if !sc.RemotePubKey().Equal(nodeKey.Public()) {
				t.Fatalf("node key seen as %x", sc.RemotePubKey())
			}
			r := <-ch
			if !tc.ok {
				if !errors.Is(r.err, remote.ErrUnauthorizedPubKey) {
					t.Fatalf("want ErrUnauthorizedPubKey, got %v", r.err)
				}
				return
			}
			if r.err != nil {
				t.Fatal(r.err)
			}
			defer r.c.Close()
			pingPong(t, sc, r.c)
		})
	}
}
