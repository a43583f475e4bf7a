package threshold_test

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/signerkit/signerkit/guard"
	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/threshold"
	"github.com/signerkit/signerkit/threshold/frost"
	"github.com/signerkit/signerkit/threshold/thresholdtest"
)

// presignAs asks party 2 for a commitment as a coordinator presenting
// cert, and returns the error.
func presignAs(t *testing.T, c *thresholdtest.Cluster, cert tls.Certificate) error {
	t.Helper()
	cfg := c.Config
	cfg.TLS = &tls.Config{Certificates: []tls.Certificate{cert}, RootCAs: c.CAPool()}
	s := newSigner(t, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := s.Presign(ctx, 2, 1)
	return err
}

// TestPartyAdmitsOnlyPinnedCoordinators: a party once admitted any client
// certificate chained to its ClientCAs, so a party holding a certificate
// from the same CA (as the network DKG issues, good for both ends) could
// act as a coordinator to the others. Only the configured coordinator is
// admitted.
func TestPartyAdmitsOnlyPinnedCoordinators(t *testing.T) {
	c := startCluster(t, thresholdtest.Options{})
	peer, err := c.PeerCert("party-3")
	if err != nil {
		t.Fatal(err)
	}
	peerClient, err := c.Cert("party-3", true)
	if err != nil {
		t.Fatal(err)
	}
	dual, err := c.PeerCert(thresholdtest.CoordinatorName)
	if err != nil {
		t.Fatal(err)
	}
	for name, cert := range map[string]tls.Certificate{
		"a participant's certificate (client and server auth)": peer,
		"a client certificate for a party's name":              peerClient,
		"the coordinator's name on a server certificate":       dual,
	} {
		if err := presignAs(t, c, cert); err == nil {
			t.Errorf("%s was admitted as a coordinator", name)
		}
	}
	if err := presignAs(t, c, c.Config.TLS.Certificates[0]); err != nil {
		t.Fatalf("the configured coordinator was refused: %v", err)
	}
	mustSign(t, newSigner(t, c.Config), []byte("from the coordinator"))
}

// TestPartyAdmitsPinnedKey: a coordinator pinned by its key's SHA-256 is
// admitted, even with a certificate good for server authentication; the
// same name with another key is not.
func TestPartyAdmitsPinnedKey(t *testing.T) {
	ca, err := thresholdtest.NewCA()
	if err != nil {
		t.Fatal(err)
	}
	cert, err := ca.PeerCert("operator")
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(cert.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	c := startCluster(t, thresholdtest.Options{CA: ca, Coordinators: []string{threshold.SPKIHash(leaf)}})
	if err := presignAs(t, c, cert); err != nil {
		t.Fatalf("the pinned key was refused: %v", err)
	}
	other, err := ca.PeerCert("operator")
	if err != nil {
		t.Fatal(err)
	}
	if err := presignAs(t, c, other); err == nil {
		t.Fatal("an unpinned key was admitted")
	}
}

func partyParts(t *testing.T) (*frost.KeyPackage, *frost.NonceStore, tls.Certificate, *thresholdtest.CA) {
	k, st, cert, ca, _ := partyDealer(t)
	return k, st, cert, ca
}

func partyDealer(t *testing.T) (*frost.KeyPackage, *frost.NonceStore, tls.Certificate, *thresholdtest.CA, *frost.Dealt) {
	t.Helper()
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
	t.Cleanup(func() { st.Close() })
	ca, err := thresholdtest.NewCA()
	if err != nil {
		t.Fatal(err)
	}
	cert, err := ca.Cert("party-1", false)
	if err != nil {
		t.Fatal(err)
	}
	return d.Shares[0], st, cert, ca, d
}

// TestNewPartyRefusesBypasses: no pinned coordinators, a malformed pin,
// and a GetConfigForClient (whose config Go would use instead of the
// party's, without TLS 1.3 or client authentication) are refused.
func TestNewPartyRefusesBypasses(t *testing.T) {
	k, st, cert, ca := partyParts(t)
	base := func() threshold.PartyConfig {
		return threshold.PartyConfig{Key: k, Nonces: st, Coordinators: []string{"coordinator"},
			TLS: &tls.Config{Certificates: []tls.Certificate{cert}, ClientCAs: ca.Pool()}}
	}
	cases := map[string]func(*threshold.PartyConfig){
		"no coordinators": func(c *threshold.PartyConfig) { c.Coordinators = nil },
		"bad pin":         func(c *threshold.PartyConfig) { c.Coordinators = []string{"sha256:abcd"} },
		"empty entry":     func(c *threshold.PartyConfig) { c.Coordinators = []string{""} },
		"no client CA":    func(c *threshold.PartyConfig) { c.TLS.ClientCAs = nil },
		"GetConfigForClient": func(c *threshold.PartyConfig) {
			c.TLS.GetConfigForClient = func(*tls.ClientHelloInfo) (*tls.Config, error) { return nil, nil }
		},
	}
	for name, mod := range cases {
		cfg := base()
		mod(&cfg)
		if _, err := threshold.NewParty(cfg); !errors.Is(err, signer.ErrInvalidArgument) {
			t.Errorf("%s: NewParty returned %v, want ErrInvalidArgument", name, err)
		}
	}
	p, err := threshold.NewParty(base())
	if err != nil {
		t.Fatal(err)
	}
	p.Close()
}

// TestSignerRefusesUnverifiedTLS: with neither RootCAs nor a callback Go
// verifies the parties against the system roots, and InsecureSkipVerify
// without a callback verifies nothing; both are refused, by New and by
// RunDKG.
func TestSignerRefusesUnverifiedTLS(t *testing.T) {
	c := startCluster(t, thresholdtest.Options{})
	certs := c.Config.TLS.Certificates
	for name, conf := range map[string]*tls.Config{
		"no RootCAs":                  {Certificates: certs},
		"InsecureSkipVerify":          {Certificates: certs, InsecureSkipVerify: true},
		"InsecureSkipVerify, RootCAs": {Certificates: certs, RootCAs: c.CAPool(), InsecureSkipVerify: true},
	} {
		cfg := c.Config
		cfg.TLS = conf
		if s, err := threshold.New(cfg); !errors.Is(err, signer.ErrInvalidArgument) {
			if s != nil {
				s.Close()
			}
			t.Errorf("New with %s: %v, want ErrInvalidArgument", name, err)
		}
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		_, _, err = threshold.RunDKG(context.Background(), threshold.DKGConfig{ID: 1, T: 2, N: 2, Listener: l,
			Peers: []threshold.Remote{{ID: 2, Addr: "127.0.0.1:1"}}, TLS: conf})
		l.Close()
		if !errors.Is(err, signer.ErrInvalidArgument) {
			t.Errorf("RunDKG with %s: %v, want ErrInvalidArgument", name, err)
		}
	}
	// A pinning callback with InsecureSkipVerify is allowed.
	cfg := c.Config
	cfg.TLS = &tls.Config{Certificates: certs, InsecureSkipVerify: true,
		VerifyConnection: func(tls.ConnectionState) error { return nil }}
	s := newSigner(t, cfg)
	mustSign(t, s, []byte("pinned by callback"))
}

// TestPinningCallbackNotResumed: Go does not call VerifyPeerCertificate on
// a resumed session, so a coordinator that pins the parties' keys with it
// must not resume: every connection is verified by the callback.
func TestPinningCallbackNotResumed(t *testing.T) {
	c := startCluster(t, thresholdtest.Options{})
	var mu sync.Mutex
	var vpc, vc, resumed int
	cfg := c.Config
	cfg.TLS = c.Config.TLS.Clone()
	cfg.TLS.ClientSessionCache = tls.NewLRUClientSessionCache(16)
	cfg.TLS.VerifyPeerCertificate = func([][]byte, [][]*x509.Certificate) error {
		mu.Lock()
		vpc++
		mu.Unlock()
		return nil
	}
	cfg.TLS.VerifyConnection = func(cs tls.ConnectionState) error {
		mu.Lock()
		vc++
		if cs.DidResume {
			resumed++
		}
		mu.Unlock()
		return nil
	}
	s := newSigner(t, cfg)
	for range 4 {
		mustSign(t, s, []byte("m"))
	}
	for _, id := range []frost.Identifier{2, 3} {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		if _, err := s.Presign(ctx, id, 1); err != nil {
			t.Fatal(err)
		}
		cancel()
	}
	mu.Lock()
	defer mu.Unlock()
	if resumed > 0 || vpc != vc {
		t.Fatalf("%d connections, %d resumed, VerifyPeerCertificate called %d times", vc, resumed, vpc)
	}
}

// TestPartyPinningCallbackNotResumed: a party that admits coordinators by
// a VerifyPeerCertificate callback (no ClientCAs) issues no session
// tickets, since Go does not call the callback on a resumed session.
func TestPartyPinningCallbackNotResumed(t *testing.T) {
	k, st, cert, ca, d := partyDealer(t)
	var mu sync.Mutex
	var vpc, vc, resumed int
	p, err := threshold.NewParty(threshold.PartyConfig{Key: k, Nonces: st, Coordinators: []string{"coordinator"},
		TLS: &tls.Config{Certificates: []tls.Certificate{cert},
			VerifyPeerCertificate: func([][]byte, [][]*x509.Certificate) error {
				mu.Lock()
				vpc++
				mu.Unlock()
				return nil
			},
			VerifyConnection: func(cs tls.ConnectionState) error {
				mu.Lock()
				vc++
				if cs.DidResume {
					resumed++
				}
				mu.Unlock()
				return nil
			}}})
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go p.Serve(l)
	defer p.Close()
	client, err := ca.Cert("coordinator", true)
	if err != nil {
		t.Fatal(err)
	}
	local, err := frost.OpenNonceStore(d.Shares[1], frost.NonceStoreConfig{FS: &guard.MemFS{}})
	if err != nil {
		t.Fatal(err)
	}
	defer local.Close()
	s := newSigner(t, threshold.Config{Public: d.Public, Local: &threshold.Local{Key: d.Shares[1], Nonces: local},
		Parties: []threshold.Remote{{ID: k.ID(), Addr: l.Addr().String(), ServerName: "party-1"}},
		TLS: &tls.Config{Certificates: []tls.Certificate{client}, RootCAs: ca.Pool(),
			ClientSessionCache: tls.NewLRUClientSessionCache(16)}})
	for range 4 {
		mustSign(t, s, []byte("m"))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := s.Presign(ctx, k.ID(), 1); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if resumed > 0 || vpc != vc {
		t.Fatalf("%d connections, %d resumed, VerifyPeerCertificate called %d times", vc, resumed, vpc)
	}
}
