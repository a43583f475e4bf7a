package threshold

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"io"
	"math/big"
	"net"
	"testing"
	"time"

	"github.com/signerkit/signerkit/guard"
	"github.com/signerkit/signerkit/internal/backoff"
	"github.com/signerkit/signerkit/threshold/frost"
)

// TestFirstRTTSampleClearsDown: the first round-trip sample of a member
// once returned before clearing its back-off, so a party marked down
// before its first answer stayed avoided.
func TestFirstRTTSampleClearsDown(t *testing.T) {
	s := &Signer{}
	m := &memberState{retry: backoff.Backoff{Min: minDown, Max: maxDown}}
	s.markBad(m) // avoided for a minute
	s.markDown(m)
	if m.downUntil.IsZero() || m.retry.Current() <= minDown {
		t.Fatalf("after failures: down until %v, next back-off %v", m.downUntil, m.retry.Current())
	}
	s.sawRTT(m, time.Millisecond)
	if !m.downUntil.IsZero() || m.retry.Current() != minDown {
		t.Fatalf("after an answer: down until %v, next back-off %v", m.downUntil, m.retry.Current())
	}
	if got := time.Duration(m.rttNanos.Load()); got != time.Millisecond {
		t.Fatalf("first sample: round trip %v, want 1ms", got)
	}
	// Cleared once, it stays cleared until the next failure.
	s.sawRTT(m, 9*time.Millisecond)
	if got := time.Duration(m.rttNanos.Load()); got != 2*time.Millisecond {
		t.Fatalf("second sample: round trip %v, want 1ms + (9ms-1ms)/8", got)
	}
	s.markDown(m)
	s.sawRTT(m, time.Millisecond)
	if !m.downUntil.IsZero() || m.retry.Current() != minDown {
		t.Fatalf("after a failure and an answer: down until %v, next back-off %v", m.downUntil, m.retry.Current())
	}
}

// TestRTTSampleTakesNoLock: an answer from a member that is up updates its
// round trip without the Signer's lock, which every share once took.
func TestRTTSampleTakesNoLock(t *testing.T) {
	s := &Signer{}
	m := &memberState{retry: backoff.Backoff{Min: minDown, Max: maxDown}}
	s.mu.Lock()
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.sawRTT(m, time.Millisecond)
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("sawRTT blocked on the Signer's lock for a member that is up")
	}
	s.mu.Unlock()
	if got := time.Duration(m.rttNanos.Load()); got != time.Millisecond {
		t.Fatalf("round trip %v, want 1ms", got)
	}
}

func selfSigned(t *testing.T) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "party"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), DNSNames: []string{"party"}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// TestPendingHandshakesCapped: a party once served every accepted
// connection's handshake for up to 30 s, without a bound; connections
// beyond maxPendingHandshakes are now closed at once.
func TestPendingHandshakesCapped(t *testing.T) {
	seed := make([]byte, 32)
	rand.Read(seed)
	d, err := frost.SplitSeed(seed, 2, 3, rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	st, err := frost.OpenNonceStore(d.Shares[0], frost.NonceStoreConfig{FS: &guard.MemFS{}})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	p, err := NewParty(PartyConfig{Key: d.Shares[0], Nonces: st, Coordinators: []string{"coordinator"},
		TLS: &tls.Config{Certificates: []tls.Certificate{selfSigned(t)}, ClientCAs: x509.NewCertPool()}})
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go p.Serve(l)
	defer p.Close()
	var idle []net.Conn
	defer func() {
		for _, c := range idle {
			c.Close()
		}
	}()
	for range maxPendingHandshakes {
		c, err := net.Dial("tcp", l.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		idle = append(idle, c)
	}
	// The party accepts in order: once one more connection is closed by
	// the party, all the idle ones before it were taken.
	extra, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer extra.Close()
	if _, err := extra.Read(make([]byte, 1)); err != io.EOF {
		t.Fatalf("a connection beyond %d pending handshakes: read %v, want EOF", maxPendingHandshakes, err)
	}
	// The idle ones are still held (their handshake is pending).
	idle[0].SetReadDeadline(time.Now().Add(50 * time.Millisecond))
	if _, err := idle[0].Read(make([]byte, 1)); err == nil || err == io.EOF {
		t.Fatalf("an idle connection within the cap was closed: %v", err)
	}
}
