package privval

import (
	"bufio"
	"errors"
	"net"
	"sync"
	"testing"

	"github.com/signerkit/signerkit/internal/secretconn"
	"github.com/signerkit/signerkit/signer"
)

// recorder is a net.Conn that keeps a copy of the last Write.
type recorder struct {
	net.Conn
	mu   sync.Mutex
	last []byte
}

func (c *recorder) Write(p []byte) (int, error) {
	c.mu.Lock()
	c.last = append(c.last[:0], p...)
	c.mu.Unlock()
	return c.Conn.Write(p)
}

// replayLast writes the last frame the node sealed again, on the raw
// connection.
func (c *recorder) replayLast(t *testing.T) {
	t.Helper()
	c.mu.Lock()
	frame := append([]byte(nil), c.last...)
	c.mu.Unlock()
	if _, err := c.Conn.Write(frame); err != nil {
		t.Fatal(err)
	}
}

// replayedFrame checks the disconnect of a replayed SecretConnection frame:
// a *ProtocolError that wraps secretconn.ErrBadFrame and
// signer.ErrProtocol, counted in Stats.ProtocolErrors.
func replayedFrame(t *testing.T, dis *disconnects, stats func() Stats) {
	t.Helper()
	err := dis.next(t)
	var pe *ProtocolError
	if !errors.As(err, &pe) || !errors.Is(err, secretconn.ErrBadFrame) || !errors.Is(err, signer.ErrProtocol) {
		t.Fatalf("a replayed frame ended the connection with %v (%T), want a *ProtocolError wrapping ErrBadFrame", err, err)
	}
	if st := stats(); st.ProtocolErrors != 1 {
		t.Fatalf("a replayed frame: stats %+v, want 1 protocol error", st)
	}
}

// TestReplayedFrameServer: the Server counts a replayed encrypted frame as
// a protocol error, not as the node hanging up.
func TestReplayedFrameServer(t *testing.T) {
	ours, nodeID := identity(0x91), identity(0x92)
	s, _, ln, dis := startSecretServer(t, ours, nil, 0, nil)
	raw := &recorder{Conn: dialNative(t, ln).conn}
	sc, err := shake(t, raw, nodeID, secretconn.PreMerlin)
	if err != nil {
		t.Fatal(err)
	}
	n := &gnoNode{t: t, conn: sc, br: bufio.NewReader(sc)}
	if url, _, _, _ := n.call(encNativePubKeyRequest()); url != typePubKeyResponse {
		t.Fatal(url)
	}
	raw.replayLast(t)
	replayedFrame(t, dis, s.Stats)
}

// TestReplayedFrameEndpoint: so does the Endpoint.
func TestReplayedFrameEndpoint(t *testing.T) {
	ours, nodeID := identity(0x93), identity(0x94)
	e, _, ln, dis := startEndpoint(t, V038, "tcp", Config{ChainID: chainID, Handshake: SecretConnection(ours, nil)})
	acc := accept(t, ln, V038)
	raw := &recorder{Conn: acc.conn}
	sc, err := shake(t, raw, nodeID, secretconn.Merlin)
	if err != nil {
		t.Fatal(err)
	}
	n := &node{t: t, conn: sc, br: bufio.NewReader(sc), d: V038}
	if r := n.call(encPingRequest()); r.kind != msgPingResponse {
		t.Fatal("no ping response")
	}
	raw.replayLast(t)
	replayedFrame(t, dis, e.Stats)
}
