package daemon

import (
	"context"
	"crypto/ed25519"
	"fmt"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/signerkit/signerkit/privval"
	"github.com/signerkit/signerkit/privval/privvaltest"
	"github.com/signerkit/signerkit/signbytes"
	"github.com/signerkit/signerkit/signer"
)

// lastWrite is a net.Conn that keeps a copy of the last Write.
type lastWrite struct {
	net.Conn
	mu   sync.Mutex
	last []byte
}

func (c *lastWrite) Write(p []byte) (int, error) {
	c.mu.Lock()
	c.last = append(c.last[:0], p...)
	c.mu.Unlock()
	return c.Conn.Write(p)
}

// TestReplayedFrameIsProtocolError: a node on the allowlist that sends
// again, on the raw TCP connection, an encrypted SecretConnection frame it
// sent before is counted under validator_disconnects_total{reason=
// "protocol"}, not as the node hanging up (reason "eof").
func TestReplayedFrameIsProtocolError(t *testing.T) {
	dir := t.TempDir()
	keyPath, pub := writeKey(t, dir, 8)
	idPath, _ := writeKey(t, dir, 9)
	node := ed25519.NewKeyFromSeed(bytesOf(13, 32))
	// A free port for the daemon to listen on.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	cfg := newConfig(t, dir, keyPath, ProtocolTM2Remote, "tcp://"+addr)
	cfg.IdentityKey = idPath
	cfg.Chains[0].Validators[0].AllowAny = true
	f := &fixture{t: t, dir: dir, pub: pub, cfg: cfg}
	if err := InitState(context.Background(), cfg.StateDir, chainID, 1); err != nil {
		t.Fatal(err)
	}
	if err := f.start(Options{}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	var raw *lastWrite
	secure := privval.LegacySecretConnection(node, nil)
	h := func(ctx context.Context, conn net.Conn) (net.Conn, ed25519.PublicKey, error) {
		raw = &lastWrite{Conn: conn}
		return secure(ctx, raw)
	}
	var nc *privvaltest.NativeClient
	for {
		if nc, err = privvaltest.DialNative(ctx, "tcp", addr, h); err == nil {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("dialing the daemon: %v", err)
		}
		time.Sleep(20 * time.Millisecond) // the daemon is not listening yet
	}
	defer nc.Close()
	sb, _ := signbytes.Message{Format: signbytes.TM2, Phase: signbytes.Prevote, Height: 1, BlockID: block(1, 1), Timestamp: baseTime, ChainID: chainID}.Bytes()
	if _, err := nc.Sign(ctx, sb); err != nil {
		t.Fatal(err)
	}
	// The sign request went out as one sealed frame; send it again.
	raw.mu.Lock()
	frame := append([]byte(nil), raw.last...)
	raw.mu.Unlock()
	if _, err := raw.Conn.Write(frame); err != nil {
		t.Fatal(err)
	}
	disconnects := func(m, reason string) float64 {
		return max(0, metric(m, "signerkit_validator_disconnects_total", "reason", reason))
	}
	var m string
	waitFor(t, "the disconnect counted", func() bool {
		m = f.scrape()
		return disconnects(m, "protocol")+disconnects(m, "eof") > 0
	})
	if p, e := disconnects(m, "protocol"), disconnects(m, "eof"); p != 1 || e != 0 {
		t.Fatalf("a replayed frame counted as disconnects_total{protocol} = %v, {eof} = %v; want 1 and 0", p, e)
	}
}

// TestDisconnectReasonProtocol: an error that wraps signer.ErrProtocol
// after the handshake (a secure channel's refusal, whatever its type) is
// a protocol disconnect; in the handshake it stays a handshake one, and
// the peer hanging up stays eof.
func TestDisconnectReasonProtocol(t *testing.T) {
	channel := fmt.Errorf("secretconn: read: %w: frame failed authentication", signer.ErrProtocol)
	for err, want := range map[error]string{
		channel:                  "protocol",
		&privval.ProtocolError{}: "protocol",
		&handshakeError{channel}: "handshake",
		io.EOF:                   "eof",
		io.ErrUnexpectedEOF:      "eof",
	} {
		if got := disconnectReason(err); got != want {
			t.Errorf("disconnectReason(%v) = %q, want %q", err, got, want)
		}
	}
}
