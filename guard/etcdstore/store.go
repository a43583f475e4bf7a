package etcdstore

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/signerkit/signerkit/guard"
	"github.com/signerkit/signerkit/signer"
)

// Defaults of Config.
const (
	// DefaultAttemptTimeout bounds one request to one member before the
	// next member is tried.
	DefaultAttemptTimeout = 700 * time.Millisecond
	// DefaultTimeout bounds a Load or Swap whose context has no
	// deadline (a sign always has one: its sign_timeout).
	DefaultTimeout = 10 * time.Second
	// DefaultPause is the wait after every member has failed once,
	// before they are tried again.
	DefaultPause = 50 * time.Millisecond
)

// Config says which etcd cluster holds the state, under which key prefix.
type Config struct {
	// Endpoints are the members' client URLs (https://host:port, or
	// http://host:port for a cluster on loopback without TLS).
	Endpoints []string
	// Prefix is put before every key: chain c's state is the key
	// Prefix + "/chain/" + url.PathEscape(c). Validators sharing one
	// cluster each take their own prefix.
	Prefix string
	// TLS is the client's TLS configuration, with its client certificate
	// and the CA that signs the members'. Nil for http:// endpoints.
	TLS *tls.Config
	// AttemptTimeout bounds one request to one member; zero means
	// DefaultAttemptTimeout. A sign's own deadline bounds all its tries.
	AttemptTimeout time.Duration
	// Pause is the wait between rounds of tries; zero means DefaultPause.
	Pause time.Duration
}

// Store is a guard.Store on etcd. It is safe for concurrent use.
type Store struct {
	endpoints []string
	prefix    string
	name      string
	client    *http.Client
	attempt   time.Duration
	pause     time.Duration
	good      atomic.Int32 // index of the endpoint that last answered
}

var _ guard.Store = (*Store)(nil)

// New returns a Store on cfg's cluster. It does not contact etcd: Ready
// does.
func New(cfg Config) (*Store, error) {
	if len(cfg.Endpoints) == 0 {
		return nil, fmt.Errorf("etcdstore: no endpoints: %w", signer.ErrInvalidArgument)
	}
	if cfg.Prefix == "" || strings.HasSuffix(cfg.Prefix, "/") {
		return nil, fmt.Errorf("etcdstore: key prefix %q: want a non-empty prefix without a trailing slash: %w", cfg.Prefix, signer.ErrInvalidArgument)
	}
	var hosts []string
	for _, ep := range cfg.Endpoints {
		u, err := url.Parse(ep)
		if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") || (u.Path != "" && u.Path != "/") {
			return nil, fmt.Errorf("etcdstore: endpoint %q: want https://host:port: %w", ep, signer.ErrInvalidArgument)
		}
		if u.Scheme == "https" && cfg.TLS == nil {
			return nil, fmt.Errorf("etcdstore: endpoint %q is https but Config.TLS is nil: %w", ep, signer.ErrInvalidArgument)
		}
		hosts = append(hosts, u.Host)
	}
	s := &Store{prefix: cfg.Prefix, attempt: cfg.AttemptTimeout, pause: cfg.Pause}
	for _, ep := range cfg.Endpoints {
		s.endpoints = append(s.endpoints, strings.TrimSuffix(ep, "/"))
	}
	if s.attempt <= 0 {
		s.attempt = DefaultAttemptTimeout
	}
	if s.pause <= 0 {
		s.pause = DefaultPause
	}
	s.name = "etcd://" + strings.Join(hosts, ",") + "/" + strings.TrimPrefix(cfg.Prefix, "/")
	tr := &http.Transport{
		DialContext:         (&net.Dialer{Timeout: s.attempt, KeepAlive: 15 * time.Second}).DialContext,
		TLSClientConfig:     cfg.TLS,
		TLSHandshakeTimeout: s.attempt,
		MaxIdleConnsPerHost: 4,
		IdleConnTimeout:     90 * time.Second,
	}
	s.client = &http.Client{Transport: tr}
	return s, nil
}

// Name returns etcd://host,host/prefix.
func (s *Store) Name() string { return s.name }

// Key returns the etcd key of chainID's state.
func (s *Store) Key(chainID string) string {
	return s.prefix + "/chain/" + url.PathEscape(chainID)
}

// Load reads chainID's state with a linearizable read (etcd's default
// range), so it sees every Swap that committed before it began.
func (s *Store) Load(ctx context.Context, chainID string) (guard.State, uint64, error) {
	key := s.Key(chainID)
	var resp rangeResp
	if err := s.do(ctx, "/v3/kv/range", rangeReq{Key: []byte(key)}, &resp); err != nil {
		return guard.State{}, 0, err
	}
	return s.decode(resp.KVs, chainID, key)
}

// decode reads the one key of a range answer; no key is ErrNoState.
func (s *Store) decode(kvs []keyValue, chainID, key string) (guard.State, uint64, error) {
	if len(kvs) == 0 {
		return guard.State{}, 0, guard.ErrNoState
	}
	kv := kvs[0]
	if string(kv.Key) != key || kv.ModRevision <= 0 {
		return guard.State{}, 0, fmt.Errorf("etcdstore: asked for %q, got key %q at revision %d: %w", key, kv.Key, kv.ModRevision, signer.ErrProtocol)
	}
	st, err := DecodeValue(kv.Value, chainID, key)
	if err != nil {
		return guard.State{}, 0, err
	}
	return st, uint64(kv.ModRevision), nil
}

// Swap writes next as chainID's state in one transaction that commits
// only if the key's mod revision is still prev (0: the key does not
// exist); if it is not, the same transaction reads the key, and Swap
// returns a *guard.ConflictError with what it holds.
func (s *Store) Swap(ctx context.Context, chainID string, prev uint64, next guard.State) (uint64, error) {
	key := []byte(s.Key(chainID))
	req := txnReq{
		Compare: []compare{{Target: "MOD", Key: key, Result: "EQUAL", ModRevision: int64(prev)}},
		Success: []requestOp{{Put: &putReq{Key: key, Value: EncodeValue(next)}}},
		Failure: []requestOp{{Range: &rangeReq{Key: key}}},
	}
	var resp txnResp
	if err := s.do(ctx, "/v3/kv/txn", req, &resp); err != nil {
		return 0, err
	}
	if resp.Succeeded {
		if resp.Header.Revision <= 0 {
			return 0, fmt.Errorf("etcdstore: a committed transaction without a revision: %w", signer.ErrProtocol)
		}
		return uint64(resp.Header.Revision), nil
	}
	if len(resp.Responses) != 1 || resp.Responses[0].Range == nil {
		return 0, fmt.Errorf("etcdstore: a failed compare without the key's range: %w", signer.ErrProtocol)
	}
	st, ver, err := s.decode(resp.Responses[0].Range.KVs, chainID, string(key))
	if err != nil && !errors.Is(err, guard.ErrNoState) {
		return 0, err
	}
	return 0, &guard.ConflictError{ChainID: chainID, Current: st, Version: ver}
}

// Ready reads the key of chainID's state linearizably, which needs a
// member with a quorum behind it: nil when the Store can serve a sign.
func (s *Store) Ready(ctx context.Context, chainID string) error {
	var resp rangeResp
	return s.do(ctx, "/v3/kv/range", rangeReq{Key: []byte(s.Key(chainID))}, &resp)
}

// Close closes the Store's idle connections.
func (s *Store) Close() error {
	s.client.CloseIdleConnections()
	return nil
}

// TLSFiles makes the client TLS configuration of a Config from PEM
// files: the CA certificate(s) that sign the members', and the client's
// certificate and key. An empty certFile leaves out the client
// certificate.
func TLSFiles(caFile, certFile, keyFile string) (*tls.Config, error) {
	ca, err := os.ReadFile(caFile)
	if err != nil {
		return nil, fmt.Errorf("etcdstore: CA: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca) {
		return nil, fmt.Errorf("etcdstore: %s holds no PEM certificate: %w", caFile, signer.ErrInvalidArgument)
	}
	cfg := &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	if certFile != "" {
		cert, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			return nil, fmt.Errorf("etcdstore: client certificate: %w", err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return cfg, nil
}
