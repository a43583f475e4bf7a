package thresholdbench

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/signerkit/signerkit/guard"
	"github.com/signerkit/signerkit/netshape"
	"github.com/signerkit/signerkit/signbytes/signbytestest"
	"github.com/signerkit/signerkit/threshold"
	"github.com/signerkit/signerkit/threshold/frost"
	"github.com/signerkit/signerkit/threshold/thresholdtest"
)

// Defaults of Config.
const (
	// DefaultPoolSize is the coordinator's pool of nonce commitments per
	// party in the rows: enough that 200 signs in flight across an ocean
	// never wait for a refill (a refill of half the pool takes one round
	// trip, and 200 in flight spend about 200 commitments per party per
	// round trip).
	DefaultPoolSize = 2048
	// DefaultNonceCapacity is each party's nonce store: room for the pool
	// and the refill in flight.
	DefaultNonceCapacity = 4 * DefaultPoolSize
)

// Config configures a Fixture.
type Config struct {
	Net Network
	// NonceDir, when set, keeps each party's nonces in a file in this
	// directory (guard.DirFS: written and fdatasync'd before a share
	// leaves the party), as a deployment does; empty keeps them in
	// memory, which leaves out the storage's cost.
	NonceDir string
	// PoolSize and NonceCapacity: 0 means the defaults above.
	PoolSize, NonceCapacity int
	// PartyTimeout and HedgeAfter are passed to threshold.Config; 0 means
	// its defaults.
	PartyTimeout, HedgeAfter time.Duration
	// WarmTimeout bounds Start's wait for the pools and its warm-up signs,
	// whatever Start's context says; 0 means DefaultWarmTimeout or 24
	// party timeouts, whichever is longer.
	WarmTimeout time.Duration
}

// DefaultWarmTimeout is the least time Start gives the parties to fill
// the coordinator's pools and the warm-up signs when Config.WarmTimeout
// is 0: ample for the rows' pools on a loaded machine under the race
// detector, and short of a test binary's own timeout.
const DefaultWarmTimeout = 2 * time.Minute

// warmTimeout is cfg's bound on warming up.
func (cfg Config) warmTimeout() time.Duration {
	if cfg.WarmTimeout > 0 {
		return cfg.WarmTimeout
	}
	pt := cfg.PartyTimeout
	if pt <= 0 {
		pt = 5 * time.Second // threshold.Config's default
	}
	return max(DefaultWarmTimeout, 24*pt)
}

// Fixture is a 2-of-3 threshold signer on a shaped network: three parties
// serving on loopback under thresholdtest, and a coordinator whose
// connections to them netshape delays as the placement says. It is safe
// for concurrent use.
type Fixture struct {
	Cluster *thresholdtest.Cluster
	Signer  *threshold.Signer
	Net     Network

	mu    sync.Mutex
	conns map[frost.Identifier][]*netshape.Conn
}

// Start starts the parties and the coordinator, waits for every party's
// pool of commitments and warms a sign connection to each party, so that
// the first measured sign finds everything ready. The wait ends with ctx
// or after Config.WarmTimeout; a pool that did not fill is then an error
// naming the party and its pool.
func Start(ctx context.Context, cfg Config) (*Fixture, error) {
	if cfg.Net.Profile == nil {
		return nil, errors.New("thresholdbench: Config.Net has no profile")
	}
	if cfg.PoolSize == 0 {
		cfg.PoolSize = DefaultPoolSize
	}
	if cfg.NonceCapacity == 0 {
		cfg.NonceCapacity = max(DefaultNonceCapacity, 4*cfg.PoolSize)
	}
	opts := thresholdtest.Options{NonceCapacity: cfg.NonceCapacity}
	if cfg.NonceDir != "" {
		opts.NonceFS = func(id frost.Identifier) guard.FS {
			dir := filepath.Join(cfg.NonceDir, fmt.Sprintf("party-%d", id))
			os.MkdirAll(dir, 0o700)
			return guard.DirFS(dir)
		}
	}
	c, err := thresholdtest.Start(opts)
	if err != nil {
		return nil, err
	}
	f := &Fixture{Cluster: c, Net: cfg.Net, conns: map[frost.Identifier][]*netshape.Conn{}}
	byAddr := map[string]frost.Identifier{}
	for _, p := range c.Config.Parties {
		byAddr[p.Addr] = p.ID
	}
	tc := c.Config
	tc.PoolSize = cfg.PoolSize
	tc.PartyTimeout = cfg.PartyTimeout
	tc.HedgeAfter = cfg.HedgeAfter
	tc.Dial = func(ctx context.Context, network, addr string) (net.Conn, error) {
		id, ok := byAddr[addr]
		if !ok {
			return nil, fmt.Errorf("thresholdbench: no party at %s", addr)
		}
		conn, err := netshape.Dialer(cfg.Net.Link(int(id)), nil)(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		f.mu.Lock()
		f.conns[id] = append(f.conns[id], conn.(*netshape.Conn))
		f.mu.Unlock()
		return conn, nil
	}
	f.Signer, err = threshold.New(tc)
	if err != nil {
		c.Close()
		return nil, err
	}
	wctx, cancel := context.WithTimeout(ctx, cfg.warmTimeout())
	err = f.warm(wctx, cfg.PoolSize)
	cancel()
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// warm waits until every party's pool is full, so that no refill runs
// beside the first measured signs, then signs until the coordinator has a
// sign connection to every party. It gives up when ctx ends, naming the
// parties whose pools are not full.
func (f *Fixture) warm(ctx context.Context, size int) error {
	for {
		var short []string
		for _, st := range f.Signer.Stats() {
			if st.Pool < size {
				short = append(short, fmt.Sprintf("party %d has %d of %d commitments (up %v, %d released, %d to release)",
					st.ID, st.Pool, size, st.Up, st.Released, st.Dropped))
			}
		}
		if len(short) == 0 {
			break
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("thresholdbench: waiting for the pools: %s: %w", strings.Join(short, "; "), ctx.Err())
		case <-time.After(5 * time.Millisecond):
		}
	}
	pub := f.Signer.Public().(ed25519.PublicKey)
	for i := range 64 {
		msg := Message(int64(i + 1))
		sig, err := f.Signer.SignContext(ctx, msg)
		if err != nil {
			return fmt.Errorf("thresholdbench: warming up: %w", err)
		}
		if !ed25519.Verify(pub, msg, sig) {
			return errors.New("thresholdbench: warming up: a signature does not verify")
		}
		connected := true
		for _, st := range f.Signer.Stats() {
			connected = connected && (st.Local || st.Sign.Frames > 0)
		}
		if connected {
			return nil
		}
	}
	return errors.New("thresholdbench: 64 signs did not reach every party")
}

// Close stops the parties and the coordinator. The parties stop first:
// the coordinator's Close would otherwise hand its pools back to parties
// about to stop, and wait on each shaped connection in turn to deliver
// its TLS close, several times the round trip on a far profile.
func (f *Fixture) Close() {
	f.Cluster.Close()
	if f.Signer != nil {
		f.Signer.Close()
	}
}

// FirstHeight is the height of the rows' first prevote: a chain some way
// into its life.
const FirstHeight = 10_000_000

// Message returns the sign bytes of a gno prevote at height h, as a
// validator's signer receives them: 108 bytes (amino writes the height as
// a fixed 8 bytes).
func Message(h int64) []byte {
	return signbytestest.Message(signbytestest.KindPrevote, h, signbytestest.SampleChainID)
}

// Traffic is the online signing traffic between the coordinator and the
// parties, both directions, all parties together.
type Traffic struct {
	// Payload is the frame bodies: the protocol's own fields and the
	// message.
	Payload uint64
	// TLS is what crossed the sockets under TLS: payload, frame headers
	// and TLS records (and the handshakes, before warming up).
	TLS uint64
	// Wire is TLS plus 52 bytes of IPv4 and TCP headers (with
	// timestamps) per segment, as netshape cut the stream; acknowledgments
	// that carry no data are not counted. Zero when the sign connections
	// could not be told from the presign connections.
	Wire uint64
	// Shares counts the valid shares received; Failures the failed
	// requests. A hedged request cancelled once another pair had signed
	// is neither, but its bytes count.
	Shares, Failures uint64
}

// Sub returns t minus u.
func (t Traffic) Sub(u Traffic) Traffic {
	return Traffic{Payload: t.Payload - u.Payload, TLS: t.TLS - u.TLS, Wire: t.Wire - u.Wire,
		Shares: t.Shares - u.Shares, Failures: t.Failures - u.Failures}
}

// SignTraffic returns the online signing traffic so far. The coordinator
// keeps one connection to each party for signing and one for presigning;
// the sign connection is the shaped connection whose bytes written equal
// the Signer's count for it.
func (f *Fixture) SignTraffic() Traffic {
	var t Traffic
	found := true
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, st := range f.Signer.Stats() {
		if st.Local {
			continue
		}
		t.Payload += st.Sign.PayloadOut + st.Sign.PayloadIn
		t.TLS += st.Sign.WireOut + st.Sign.WireIn
		t.Shares += st.Shares
		t.Failures += st.Failures
		var sign *netshape.Conn
		for _, c := range f.conns[st.ID] {
			if s := c.Stats(); uint64(s.Out.Bytes) == st.Sign.WireOut {
				sign = c
			}
		}
		if sign == nil {
			found = false
			continue
		}
		s := sign.Stats()
		t.Wire += uint64(s.Out.WireBytes(52) + s.In.WireBytes(52))
	}
	if !found {
		t.Wire = 0
	}
	return t
}

// PresignTraffic returns the bytes of the presign connections so far:
// payload and TLS, as in Traffic.
func (f *Fixture) PresignTraffic() Traffic {
	var t Traffic
	for _, st := range f.Signer.Stats() {
		t.Payload += st.Presign.PayloadOut + st.Presign.PayloadIn
		t.TLS += st.Presign.WireOut + st.Presign.WireIn
	}
	return t
}
