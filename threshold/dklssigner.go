package threshold

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/sha256"
	"crypto/tls"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/signerkit/signerkit/internal/backoff"
	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/threshold/dkls23"
	"github.com/signerkit/signerkit/threshold/frost"
)

// DKLS23Config configures a DKLS23Signer.
type DKLS23Config struct {
	// Local is the share the coordinator holds: required. DKLS23's
	// presigning is a two-party protocol between the signers with
	// pairwise confidential channels; holding one share, the coordinator
	// is itself one of the two, and its mutual TLS connection to the
	// other is that channel, end to end.
	Local *dkls23.Share
	// Parties are the remote parties (the key's other shares); any one of
	// them signs with Local.
	Parties []Remote
	// TLS and Dial are as in Config.
	TLS  *tls.Config
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// PoolSize is the number of presignatures kept ready with each party,
	// made in the background; 0 means 8, negative none (every sign then
	// presigns first: two more round trips).
	PoolSize int
	// PartyTimeout bounds one request to one party; 0 means 5 s.
	PartyTimeout time.Duration
	// HedgeAfter is how long a sign waits on a party before it also asks
	// another, with a presignature of that party's pool (or one made
	// there and then), and returns whichever signature comes first; 0
	// means adaptive (three times the party's mean sign round trip, plus
	// its mean presign time when the sign has to presign first, at least
	// 20 ms), negative turns hedging off. A hedged sign may consume two
	// presignatures, each of which still signs one message only.
	HedgeAfter time.Duration
	// Log, when set, gets a line naming the party each time one fails and
	// is routed around. Nil logs nothing.
	Log *slog.Logger
}

// DKLS23Signer is the coordinator of a 2-of-n DKLS23 secp256k1 key: a
// signer.Signer (signer.ECDSASecp256k1: SHA-256, 64-byte r‖s, low S, as
// gno and Cosmos verify) that signs with its own share and one remote
// party per signature. A sign takes one presignature made with a party
// ahead of time and is one round trip to that party: the request carries
// the presignature's id and the hash, the answer the party's share. A
// party that is down, slow, refuses or answers wrongly is routed around:
// the sign tries the next party, with a presignature of its pool or one
// made there and then. A party slower than the hedge delay
// (DKLS23Config.HedgeAfter) is not waited out: the sign asks another as
// well and returns the first signature. Every signature is verified before it is returned.
// It is safe for concurrent use.
type DKLS23Signer struct {
	local   *dkls23.Share
	pub     *ecdsa.PublicKey
	pubKey  []byte // compressed
	members []*dklsMember
	pool    int
	timeout time.Duration
	hedge   time.Duration
	log     *slog.Logger

	ctx    context.Context // ends at Close
	cancel context.CancelFunc
	wg     sync.WaitGroup
	mu     sync.Mutex // guards the members' pools and health
	closed atomic.Bool
}

var (
	_ signer.Signer          = (*DKLS23Signer)(nil)
	_ signer.AlgorithmSigner = (*DKLS23Signer)(nil)
)

// dklsMember is one remote party, its pool and health.
type dklsMember struct {
	id   int
	r    *remote
	wake chan struct{}

	pool      []dklsPre // under Signer.mu
	downUntil time.Time
	retry     backoff.Backoff

	rttNanos, preNanos         atomic.Int64 // moving averages: sign round trip, presign
	shares, failures, timeouts atomic.Uint64
	overtaken                  atomic.Uint64 // signs a hedge answered first
}

// dklsPre is the coordinator's half of a presignature with one party.
type dklsPre struct {
	id dklsID
	ps *dkls23.Presignature
}

// DKLS23PartyError is a party that answered a DKLS23 request against the
// protocol: a message that does not decode, a check that fails on its
// messages, a share that does not make a valid signature. Party is its
// index. It wraps signer.ErrProtocol and the cause (a *dkls23.AbortError,
// say).
type DKLS23PartyError struct {
	Party int
	Err   error
}

func (e *DKLS23PartyError) Error() string {
	return fmt.Sprintf("threshold: DKLS23 party %d misbehaved: %v", e.Party, e.Err)
}

// Unwrap returns signer.ErrProtocol and the cause.
func (e *DKLS23PartyError) Unwrap() []error { return []error{signer.ErrProtocol, e.Err} }

// NoSignerError is a sign that found no party to sign with: each was
// tried and failed. Errs holds each party's error. It wraps
// signer.ErrDeviceNotFound, the context's error when the sign's deadline
// ended it, and the parties' errors.
type NoSignerError struct {
	Errs map[int]error
	Ctx  error // ctx.Err() when the deadline ended the sign
}

func (e *NoSignerError) Error() string {
	msg := "threshold: no DKLS23 party could sign"
	if e.Ctx != nil {
		msg += " before the deadline (" + e.Ctx.Error() + ")"
	}
	for _, id := range slices.Sorted(maps.Keys(e.Errs)) {
		msg += fmt.Sprintf("; party %d: %v", id, e.Errs[id])
	}
	return msg
}

// Unwrap returns signer.ErrDeviceNotFound, the context's error, and each
// party's error (so errors.As finds a *DKLS23PartyError).
func (e *NoSignerError) Unwrap() []error {
	out := []error{signer.ErrDeviceNotFound}
	if e.Ctx != nil {
		out = append(out, e.Ctx)
	}
	for _, id := range slices.Sorted(maps.Keys(e.Errs)) {
		out = append(out, e.Errs[id])
	}
	return out
}

// NewDKLS23Signer returns the coordinator for cfg and starts filling the
// parties' pools; it dials lazily.
func NewDKLS23Signer(cfg DKLS23Config) (*DKLS23Signer, error) {
	switch {
	case cfg.Local == nil:
		return nil, fmt.Errorf("threshold: DKLS23Config.Local is nil: the coordinator holds a share: %w", signer.ErrInvalidArgument)
	case cfg.Local.T != 2:
		return nil, fmt.Errorf("threshold: a %d-of-%d DKLS23 key: only 2-of-n keys are served: %w", cfg.Local.T, cfg.Local.N, signer.ErrUnsupported)
	case len(cfg.Parties) == 0:
		return nil, fmt.Errorf("threshold: DKLS23Config.Parties is empty: %w", signer.ErrInvalidArgument)
	case cfg.TLS == nil:
		return nil, fmt.Errorf("threshold: DKLS23Config.TLS is nil: %w", signer.ErrInvalidArgument)
	}
	pub, err := signer.ParseSecp256k1PublicKey(cfg.Local.PublicKey())
	if err != nil {
		return nil, err
	}
	tconf, err := clientTLS(cfg.TLS)
	if err != nil {
		return nil, err
	}
	s := &DKLS23Signer{local: cfg.Local, pub: pub, pubKey: cfg.Local.PublicKey(), pool: cfg.PoolSize,
		timeout: cfg.PartyTimeout, hedge: cfg.HedgeAfter, log: cfg.Log}
	if s.pool == 0 {
		s.pool = 8
	}
	if s.timeout <= 0 {
		s.timeout = 5 * time.Second
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	dial := cfg.Dial
	if dial == nil {
		dial = (&net.Dialer{}).DialContext
	}
	seen := map[int]bool{cfg.Local.ID: true}
	for _, p := range cfg.Parties {
		id := int(p.ID)
		if id < 1 || id > cfg.Local.N || seen[id] {
			return nil, fmt.Errorf("threshold: DKLS23 party %d is repeated, the local share's, or not of a %d-party key: %w", id, cfg.Local.N, signer.ErrInvalidArgument)
		}
		seen[id] = true
		t := tconf.Clone()
		if t.ServerName = p.ServerName; t.ServerName == "" {
			t.ServerName, _, _ = net.SplitHostPort(p.Addr)
		}
		s.members = append(s.members, &dklsMember{id: id, wake: make(chan struct{}, 1),
			r:     &remote{id: frost.Identifier(id), addr: p.Addr, tls: t, dial: dial},
			retry: backoff.Backoff{Min: minDown, Max: maxDown, Jitter: 0.5}})
	}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	if s.pool > 0 {
		for _, m := range s.members {
			s.wg.Add(1)
			go s.refiller(m)
		}
	}
	return s, nil
}

// Public returns the key's public key, an *ecdsa.PublicKey on secp256k1.
func (s *DKLS23Signer) Public() crypto.PublicKey {
	k := *s.pub
	return &k
}

// PublicKey returns the key's compressed public key (33 bytes).
func (s *DKLS23Signer) PublicKey() []byte { return slices.Clone(s.pubKey) }

// Algorithm returns signer.ECDSASecp256k1.
func (s *DKLS23Signer) Algorithm() signer.Algorithm { return signer.ECDSASecp256k1 }

// SignContext signs SHA-256(msg) and returns r‖s, 64 bytes, low S.
func (s *DKLS23Signer) SignContext(ctx context.Context, msg []byte) ([]byte, error) {
	h := sha256.Sum256(msg)
	return s.signDigest(ctx, h[:])
}

// Sign signs a SHA-256 digest and returns the ASN.1 DER signature, as
// crypto.Signer does; rand is ignored. It waits for parties up to
// PartyTimeout each.
func (s *DKLS23Signer) Sign(_ io.Reader, digest []byte, opts crypto.SignerOpts) ([]byte, error) {
	if err := signer.CheckSignerOpts(signer.ECDSASecp256k1, digest, opts); err != nil {
		return nil, err
	}
	raw, err := s.signDigest(context.Background(), digest)
	if err != nil {
		return nil, err
	}
	return signer.ECDSAToASN1(signer.ECDSASecp256k1, raw)
}

// Close stops the pools' refills and closes the connections. The
// presignatures held are dropped (the parties drop theirs in time).
func (s *DKLS23Signer) Close() error {
	if s.closed.Swap(true) {
		return nil
	}
	s.cancel()
	for _, m := range s.members {
		m.r.close()
	}
	s.wg.Wait()
	s.mu.Lock()
	for _, m := range s.members {
		m.pool = nil
	}
	s.mu.Unlock()
	return nil
}

// Pooled returns the presignatures ready with each party, by index.
func (s *DKLS23Signer) Pooled() map[int]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[int]int{}
	for _, m := range s.members {
		out[m.id] = len(m.pool)
	}
	return out
}

// Counters returns the bytes on the sign and the presign connection to
// party id.
func (s *DKLS23Signer) Counters(id int) (sign, presign Counters) {
	for _, m := range s.members {
		if m.id == id {
			return m.r.signC.snapshot(), m.r.preC.snapshot()
		}
	}
	return Counters{}, Counters{}
}

// DKLS23PartyStats is one remote party of a DKLS23Signer, as the
// coordinator sees it.
type DKLS23PartyStats struct {
	ID   int
	Up   bool // not being avoided after a failure
	Pool int  // presignatures ready
	// RTT is the moving average of the party's sign round trips; a sign
	// cut short (by a hedge that answered first, or a timeout) counts as
	// the time it was waited for, at least. PresignTime is the moving
	// average of making one presignature with the party.
	RTT, PresignTime time.Duration
	// Shares counts the valid shares received; Failures the signs the
	// party failed (Timeouts of them timed out); Overtaken the signs a
	// hedge to another party answered first.
	Shares, Failures, Timeouts, Overtaken uint64
	// Sign and Presign count the sign and presign connections' bytes.
	Sign, Presign Counters
}

// Stats returns each remote party's state and counters, in config order.
func (s *DKLS23Signer) Stats() []DKLS23PartyStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	out := make([]DKLS23PartyStats, 0, len(s.members))
	for _, m := range s.members {
		out = append(out, DKLS23PartyStats{ID: m.id, Up: !now.Before(m.downUntil), Pool: len(m.pool),
			RTT: time.Duration(m.rttNanos.Load()), PresignTime: time.Duration(m.preNanos.Load()),
			Shares: m.shares.Load(), Failures: m.failures.Load(), Timeouts: m.timeouts.Load(), Overtaken: m.overtaken.Load(),
			Sign: m.r.signC.snapshot(), Presign: m.r.preC.snapshot()})
	}
	return out
}

// average moves the moving average in v an eighth of the way to d, or
// sets it to d when unset.
func average(v *atomic.Int64, d time.Duration) {
	for {
		old := v.Load()
		next := int64(d)
		if old != 0 {
			next = old + (next-old)/8
		}
		if v.CompareAndSwap(old, next) {
			return
		}
	}
}

var errDKLSClosed = fmt.Errorf("threshold: %w", signer.ErrClosed)
