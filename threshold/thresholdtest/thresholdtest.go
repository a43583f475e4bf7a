// Package thresholdtest runs the parties of a threshold key in process, on
// real sockets with mutual TLS 1.3 under an ephemeral CA, for tests and
// benchmarks of package threshold, the way net/http/httptest runs a
// server. A Cluster's Config is ready for threshold.New.
//
// A Cluster is safe for concurrent use.
package thresholdtest

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"net"
	"sync"
	"time"

	"github.com/signerkit/signerkit/guard"
	"github.com/signerkit/signerkit/threshold"
	"github.com/signerkit/signerkit/threshold/frost"
)

// Options configures a Cluster. The zero value is a 2-of-3 key split from
// a random seed, three remote parties on 127.0.0.1, nonces in memory.
type Options struct {
	// T and N are the threshold and the number of participants; 0 means
	// 2 and 3.
	T, N int
	// Seed, when set, is the Ed25519 seed split by a trusted dealer;
	// nil means a random one. DKG runs a distributed key generation
	// instead.
	Seed []byte
	DKG  bool
	// Local makes participant 1 the coordinator's own share
	// (threshold.Local) instead of a remote party.
	Local bool
	// WrapListener, when set, wraps each party's listener (a network
	// shaper, a fault injector).
	WrapListener func(id frost.Identifier, l net.Listener) net.Listener
	// NonceFS returns the FS of participant id's nonce store; nil means
	// a new guard.MemFS each (not crash-safe, and no fsync cost).
	NonceFS func(id frost.Identifier) guard.FS
	// Guard, when set, returns participant id's guard configuration.
	Guard func(id frost.Identifier) *guard.Config
	// Log, when set, is every party's logger (PartyConfig.Log).
	Log *slog.Logger
	// NonceCapacity is each nonce store's capacity; 0 means frost's
	// default.
	NonceCapacity int
	// NonceRand, when set, returns the randomness of participant id's
	// nonce store (frost.NonceStoreConfig.Rand); nil means crypto/rand. A
	// slow reader makes the party slow to presign, in proportion to the
	// batch, as a loaded machine is.
	NonceRand func(id frost.Identifier) io.Reader
	// Coordinators are more coordinator identities the parties admit
	// (threshold.PartyConfig.Coordinators), besides CoordinatorName.
	Coordinators []string
	// ReclaimAfter is each party's threshold.PartyConfig.ReclaimAfter.
	ReclaimAfter time.Duration
	// CA, when set, is the CA that issues the cluster's certificates;
	// nil means a new one.
	CA *CA
}

// CoordinatorName is the name of the coordinator's certificate in
// Cluster.Config, which every party admits.
const CoordinatorName = "coordinator"

// Cluster is a running set of parties.
type Cluster struct {
	// Config is the coordinator's configuration: public key package,
	// parties, TLS client certificate and CA, and Local when
	// Options.Local. Set Dial, PoolSize and the timeouts as needed.
	Config threshold.Config
	// Keys are every participant's key package, by identifier - 1.
	Keys []*frost.KeyPackage
	// Seed is the split seed (nil after a DKG).
	Seed []byte

	opts      Options
	ca        *CA
	mu        sync.Mutex
	parties   map[frost.Identifier]*running
	stores    []*frost.NonceStore
	listeners map[frost.Identifier]string // addresses, kept for Restart
}

type running struct {
	party *threshold.Party
	store *frost.NonceStore
	done  chan error
}

// Start makes the key, the CA and certificates, and starts the parties.
func Start(opts Options) (*Cluster, error) {
	if opts.T == 0 {
		opts.T = 2
	}
	if opts.N == 0 {
		opts.N = 3
	}
	c := &Cluster{opts: opts, parties: map[frost.Identifier]*running{}, listeners: map[frost.Identifier]string{}}
	var pub *frost.PublicKeyPackage
	if opts.DKG {
		keys, p, err := frost.RunDKG(opts.T, opts.N, rand.Reader)
		if err != nil {
			return nil, err
		}
		c.Keys, pub = keys, p
	} else {
		c.Seed = opts.Seed
		if c.Seed == nil {
			c.Seed = make([]byte, ed25519.SeedSize)
			rand.Read(c.Seed)
		}
		d, err := frost.SplitSeed(c.Seed, opts.T, opts.N, rand.Reader)
		if err != nil {
			return nil, err
		}
		c.Keys, pub = d.Shares, d.Public
	}
	var err error
	if c.ca = opts.CA; c.ca == nil {
		if c.ca, err = NewCA(); err != nil {
			return nil, err
		}
	}
	client, err := c.ca.Cert(CoordinatorName, true)
	if err != nil {
		return nil, err
	}
	c.Config = threshold.Config{Public: pub, TLS: &tls.Config{Certificates: []tls.Certificate{client}, RootCAs: c.ca.Pool()}}
	for _, k := range c.Keys {
		if opts.Local && k.ID() == 1 {
			st, err := c.openStore(k)
			if err != nil {
				c.Close()
				return nil, err
			}
			c.Config.Local = &threshold.Local{Key: k, Nonces: st}
			continue
		}
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			c.Close()
			return nil, err
		}
		if err := c.start(k, l); err != nil {
			l.Close()
			c.Close()
			return nil, err
		}
		c.Config.Parties = append(c.Config.Parties, threshold.Remote{ID: k.ID(), Addr: l.Addr().String(), ServerName: partyName(k.ID())})
	}
	return c, nil
}

func partyName(id frost.Identifier) string { return fmt.Sprintf("party-%d", id) }

func (c *Cluster) openStore(k *frost.KeyPackage) (*frost.NonceStore, error) {
	var fsys guard.FS = &guard.MemFS{}
	if c.opts.NonceFS != nil {
		fsys = c.opts.NonceFS(k.ID())
	}
	var rnd io.Reader
	if c.opts.NonceRand != nil {
		rnd = c.opts.NonceRand(k.ID())
	}
	st, err := frost.OpenNonceStore(k, frost.NonceStoreConfig{FS: fsys, Capacity: c.opts.NonceCapacity, Rand: rnd})
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.stores = append(c.stores, st)
	c.mu.Unlock()
	return st, nil
}

func (c *Cluster) start(k *frost.KeyPackage, l net.Listener) error {
	st, err := c.openStore(k)
	if err != nil {
		return err
	}
	cert, err := c.ca.Cert(partyName(k.ID()), false)
	if err != nil {
		return err
	}
	cfg := threshold.PartyConfig{Key: k, Nonces: st, TLS: &tls.Config{Certificates: []tls.Certificate{cert}, ClientCAs: c.ca.Pool()},
		Coordinators: append([]string{CoordinatorName}, c.opts.Coordinators...), ReclaimAfter: c.opts.ReclaimAfter, Log: c.opts.Log}
	if c.opts.Guard != nil {
		cfg.Guard = c.opts.Guard(k.ID())
	}
	p, err := threshold.NewParty(cfg)
	if err != nil {
		return err
	}
	if c.opts.WrapListener != nil {
		l = c.opts.WrapListener(k.ID(), l)
	}
	r := &running{party: p, store: st, done: make(chan error, 1)}
	c.mu.Lock()
	c.parties[k.ID()] = r
	c.listeners[k.ID()] = l.Addr().String()
	c.mu.Unlock()
	go func() { r.done <- p.Serve(l) }()
	return nil
}

// Party returns the running party id, or nil.
func (c *Cluster) Party(id frost.Identifier) *threshold.Party {
	c.mu.Lock()
	defer c.mu.Unlock()
	if r := c.parties[id]; r != nil {
		return r.party
	}
	return nil
}

// Stop stops party id, as if its machine went down: its listener and
// connections close, then its nonce store.
func (c *Cluster) Stop(id frost.Identifier) {
	c.mu.Lock()
	r := c.parties[id]
	delete(c.parties, id)
	c.mu.Unlock()
	if r != nil {
		r.party.Close()
		<-r.done
		r.store.Close()
	}
}

// Restart starts party id again on its old address after Stop. Its nonce
// store is opened again from Options.NonceFS; with the default, a new
// MemFS, it starts empty.
func (c *Cluster) Restart(id frost.Identifier) error {
	c.mu.Lock()
	addr := c.listeners[id]
	c.mu.Unlock()
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	return c.start(c.Keys[id-1], l)
}

// Close stops every party and closes the nonce stores.
func (c *Cluster) Close() {
	c.mu.Lock()
	var ids []frost.Identifier
	for id := range c.parties {
		ids = append(ids, id)
	}
	c.mu.Unlock()
	for _, id := range ids {
		c.Stop(id)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, st := range c.stores {
		st.Close()
	}
	c.stores = nil
}

// CA is an ephemeral certificate authority for tests: it issues
// certificates for 127.0.0.1 and a DNS name, valid for a day.
type CA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pool *x509.CertPool

	mu     sync.Mutex
	serial int64
}

// NewCA makes a CA with a fresh P-256 key.
func NewCA() (*CA, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "thresholdtest CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	ca := &CA{cert: cert, key: key, pool: x509.NewCertPool(), serial: 1}
	ca.pool.AddCert(cert)
	return ca, nil
}

// Pool returns a pool holding the CA, for RootCAs and ClientCAs.
func (ca *CA) Pool() *x509.CertPool { return ca.pool }

// Cert issues a certificate for name (its DNS name and common name) and
// 127.0.0.1, for client authentication (a coordinator) or server
// authentication (a party).
func (ca *CA) Cert(name string, client bool) (tls.Certificate, error) {
	if client {
		return ca.issue(name, x509.ExtKeyUsageClientAuth)
	}
	return ca.issue(name, x509.ExtKeyUsageServerAuth)
}

// PeerCert issues a certificate good for both ends of a connection, as a
// participant of a network key generation needs.
func (ca *CA) PeerCert(name string) (tls.Certificate, error) {
	return ca.issue(name, x509.ExtKeyUsageClientAuth, x509.ExtKeyUsageServerAuth)
}

func (ca *CA) issue(name string, usage ...x509.ExtKeyUsage) (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	ca.mu.Lock()
	ca.serial++
	sn := ca.serial
	ca.mu.Unlock()
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(sn), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		DNSNames: []string{name}, IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: usage}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, nil
}

// Cert returns a new certificate under the cluster's CA, for a client
// (coordinator) or a server (party), e.g. to test a second coordinator.
func (c *Cluster) Cert(name string, client bool) (tls.Certificate, error) {
	return c.ca.Cert(name, client)
}

// PeerCert returns a new certificate under the cluster's CA good for both
// client and server authentication, as a network key generation issues.
func (c *Cluster) PeerCert(name string) (tls.Certificate, error) {
	return c.ca.PeerCert(name)
}

// CAPool returns the pool holding the cluster's CA.
func (c *Cluster) CAPool() *x509.CertPool { return c.ca.Pool() }
