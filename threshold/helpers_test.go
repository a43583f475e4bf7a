package threshold_test

import (
	"context"
	"crypto/ed25519"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/signerkit/signerkit/threshold"
	"github.com/signerkit/signerkit/threshold/frost"
	"github.com/signerkit/signerkit/threshold/thresholdtest"
)

// hangSwitch makes the connections of the listeners it wraps stop reading
// while it is on, as a hung machine would.
type hangSwitch struct {
	mu   sync.Mutex
	on   map[frost.Identifier]bool
	wake chan struct{}
}

func newHangSwitch() *hangSwitch {
	return &hangSwitch{on: map[frost.Identifier]bool{}, wake: make(chan struct{})}
}

func (h *hangSwitch) set(id frost.Identifier, on bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.on[id] = on
	if !on {
		close(h.wake)
		h.wake = make(chan struct{})
	}
}

// hangAll hangs every party until release is called.
func (h *hangSwitch) hangAll(ids ...frost.Identifier) func() {
	for _, id := range ids {
		h.set(id, true)
	}
	return func() {
		for _, id := range ids {
			h.set(id, false)
		}
	}
}

func (h *hangSwitch) wait(id frost.Identifier) {
	for {
		h.mu.Lock()
		on, wake := h.on[id], h.wake
		h.mu.Unlock()
		if !on {
			return
		}
		<-wake
	}
}

func (h *hangSwitch) wrap(id frost.Identifier, l net.Listener) net.Listener {
	return &hangListener{Listener: l, id: id, h: h}
}

type hangListener struct {
	net.Listener
	id frost.Identifier
	h  *hangSwitch
}

func (l *hangListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &hangConn{Conn: c, id: l.id, h: l.h}, nil
}

type hangConn struct {
	net.Conn
	id frost.Identifier
	h  *hangSwitch
}

func (c *hangConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.h.wait(c.id) // data read while hung is held back until release
	return n, err
}

func startCluster(t *testing.T, opts thresholdtest.Options) *thresholdtest.Cluster {
	t.Helper()
	c, err := thresholdtest.Start(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

func newSigner(t *testing.T, cfg threshold.Config) *threshold.Signer {
	t.Helper()
	s, err := threshold.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// mustSign signs msg and verifies the signature with crypto/ed25519.
func mustSign(t *testing.T, s *threshold.Signer, msg []byte) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sig, err := s.SignContext(ctx, msg)
	if err != nil {
		t.Fatalf("sign: %v", err)
	}
	if !ed25519.Verify(s.Public().(ed25519.PublicKey), msg, sig) {
		t.Fatalf("signature %x does not verify with crypto/ed25519", sig)
	}
	return sig
}

func stats(s *threshold.Signer, id frost.Identifier) threshold.PartyStats {
	for _, p := range s.Stats() {
		if p.ID == id {
			return p
		}
	}
	return threshold.PartyStats{}
}
