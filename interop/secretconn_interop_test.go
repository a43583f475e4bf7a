package interop

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"testing"
	"time"

	cmted25519 "github.com/cometbft/cometbft/crypto/ed25519"
	cmtconn "github.com/cometbft/cometbft/p2p/conn"
	"github.com/gnolang/gno/tm2/pkg/bft/privval/upstream"
	gnoed25519 "github.com/gnolang/gno/tm2/pkg/crypto/ed25519"
	tm2conn "github.com/gnolang/gno/tm2/pkg/p2p/conn"
	tm034ed25519 "github.com/tendermint/tendermint/crypto/ed25519"
	tm034conn "github.com/tendermint/tendermint/p2p/conn"

	"github.com/signerkit/signerkit/internal/secretconn"
	"github.com/signerkit/signerkit/signer"
)

// peerConn is the vendor side of a SecretConnection: the connection and
// the remote key it authenticated, as 32 raw bytes.
type peerConn struct {
	rw     io.ReadWriteCloser
	remote []byte
}

// vendor is one real SecretConnection implementation.
type vendor struct {
	name    string
	variant secretconn.Variant // the one it speaks
	make    func(c net.Conn, priv ed25519.PrivateKey) (peerConn, error)
}

var vendors = []vendor{
	{"cometbft-v0.38", secretconn.Merlin, func(c net.Conn, priv ed25519.PrivateKey) (peerConn, error) {
		sc, err := cmtconn.MakeSecretConnection(c, cmted25519.PrivKey(priv))
		if err != nil {
			return peerConn{}, err
		}
		return peerConn{sc, sc.RemotePubKey().Bytes()}, nil
	}},
	{"cometbft-v0.34", secretconn.Merlin, func(c net.Conn, priv ed25519.PrivateKey) (peerConn, error) {
		sc, err := tm034conn.MakeSecretConnection(c, tm034ed25519.PrivKey(priv))
		if err != nil {
			return peerConn{}, err
		}
		return peerConn{sc, sc.RemotePubKey().Bytes()}, nil
	}},
	{"gno-upstream", secretconn.Merlin, func(c net.Conn, priv ed25519.PrivateKey) (peerConn, error) {
		sc, err := upstream.MakeSecretConnection(c, gnoed25519.PrivKeyEd25519(priv))
		if err != nil {
			return peerConn{}, err
		}
		pk, ok := sc.RemotePubKey().(gnoed25519.PubKeyEd25519)
		if !ok {
			return peerConn{}, fmt.Errorf("remote key is %T", sc.RemotePubKey())
		}
		return peerConn{sc, pk[:]}, nil
	}},
	{"gno-tm2-p2p", secretconn.PreMerlin, func(c net.Conn, priv ed25519.PrivateKey) (peerConn, error) {
		sc, err := tm2conn.MakeSecretConnection(c, gnoed25519.PrivKeyEd25519(priv))
		if err != nil {
			return peerConn{}, err
		}
		pk := sc.RemotePubKey()
		return peerConn{sc, pk[:]}, nil
	}},
}

func tcpConns(t *testing.T) (net.Conn, net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	ch := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			t.Error(err)
		}
		ch <- c
	}()
	d, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	a := <-ch
	if a == nil {
		t.FailNow()
	}
	return d, a
}

type vendorResult struct {
	pc  peerConn
	err error
}

// connectVendor runs our handshake on one end of a TCP connection (the
// dialing end if weDial) and the vendor's on the other.
func connectVendor(t *testing.T, v vendor, ours secretconn.Variant, weDial bool, ourKey, theirKey ed25519.PrivateKey) (*secretconn.Conn, peerConn, error, error) {
	t.Helper()
	d, a := tcpConns(t)
	mine, theirs := d, a
	if !weDial {
		mine, theirs = a, d
	}
	ch := make(chan vendorResult, 1)
	go func() {
		pc, err := v.make(theirs, theirKey)
		if err != nil {
			theirs.Close()
		}
		ch <- vendorResult{pc, err}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := secretconn.Handshake(ctx, mine, ourKey, ours)
	if err != nil {
		mine.Close()
	}
	r := <-ch
	if err == nil && r.err != nil {
		c.Close()
	}
	if err != nil && r.err == nil {
		r.pc.rw.Close()
	}
	return c, r.pc, err, r.err
}

func TestSecretConnInterop(t *testing.T) {
	ourKey := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{0x51}, 32))
	theirKey := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{0x7a}, 32))
	sizes := []int{1, 100, 1023, 1024, 1025, 2048, 3073, 10240}
	for _, v := range vendors {
		t.Run(v.name, func(t *testing.T) {
			// The ephemeral keys are fresh each time, so which side sorts
			// lower (and so which HKDF half is whose send key) varies:
			// 16 runs miss one ordering with probability 2^-15.
			for i := 0; i < 16; i++ {
				c, pc, err, verr := connectVendor(t, v, v.variant, i%2 == 0, ourKey, theirKey)
				if err != nil || verr != nil {
					t.Fatalf("run %d: ours: %v; theirs: %v", i, err, verr)
				}
				if !c.RemotePubKey().Equal(theirKey.Public()) {
					t.Fatalf("we see remote key %x", c.RemotePubKey())
				}
				if !bytes.Equal(pc.remote, ourKey.Public().(ed25519.PublicKey)) {
					t.Fatalf("%s sees remote key %x", v.name, pc.remote)
				}
				for _, n := range sizes {
					msg := bytes.Repeat([]byte{byte(i), byte(n)}, n/2+1)[:n]
					// ours -> theirs
					go c.Write(msg)
					got := make([]byte, n)
					if _, err := io.ReadFull(pc.rw, got); err != nil || !bytes.Equal(got, msg) {
						t.Fatalf("run %d, %d bytes to %s: %v", i, n, v.name, err)
					}
					// theirs -> ours
					back := bytes.Repeat([]byte{byte(n), 0xee}, n/2+1)[:n]
					go pc.rw.Write(back)
					if _, err := io.ReadFull(c, got); err != nil || !bytes.Equal(got, back) {
						t.Fatalf("run %d, %d bytes from %s: %v", i, n, v.name, err)
					}
				}
				c.Close()
				pc.rw.Close()
			}
		})
	}
}

// The other variant against each vendor fails on both ends. Ours says why
// with a protocol error, unless the vendor gave up and hung up first.
func TestSecretConnInteropWrongVariant(t *testing.T) {
	ourKey := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{0x51}, 32))
	theirKey := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{0x7a}, 32))
	for _, v := range vendors {
		t.Run(v.name, func(t *testing.T) {
			other := secretconn.Merlin
			if v.variant == secretconn.Merlin {
				other = secretconn.PreMerlin
			}
			_, _, err, verr := connectVendor(t, v, other, true, ourKey, theirKey)
			if err == nil || verr == nil {
				t.Fatalf("connected with the wrong variant: ours %v; theirs %v", err, verr)
			}
			if !errors.Is(err, signer.ErrProtocol) && !errors.Is(err, io.EOF) && !errors.Is(err, syscall.ECONNRESET) {
				t.Fatalf("ours: %v", err)
			}
		})
	}
}
