package bench

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"net"
	"os"
	"sync/atomic"
	"time"

	"github.com/signerkit/signerkit/guard"
	"github.com/signerkit/signerkit/inprocess"
	"github.com/signerkit/signerkit/internal/secretconn"
	"github.com/signerkit/signerkit/privval"
	"github.com/signerkit/signerkit/privval/privvaltest"
	"github.com/signerkit/signerkit/signbytes"
	"github.com/signerkit/signerkit/signer"
)

// The remote-signer rows, privval-<protocol>-<unix|tcp>[-durable]: an
// in-process Ed25519 key behind a guard.Guard, served by package privval
// to a validator played by package privvaltest in the same process. Each
// sign of the row is one request and its answer, as the validator sees
// it:
//
//   - cometbft: the CometBFT privval protocol, the signer dialing the
//     validator (privval.Endpoint), in its gno-tmkms dialect — v0.34
//     messages, tm2 sign bytes — which gno v1.7.1's tmkms_listener
//     speaks, so that the rows sign the same tm2 votes as every other
//     validator row. Each vote or proposal is sent as a SignVoteRequest or
//     SignProposalRequest; the v0.38 dialect differs only by two empty
//     fields on these.
//   - native: gno's native remote-signer protocol, the validator dialing
//     the signer (privval.Server), the one gnokms served.
//
// Over TCP both run inside a SecretConnection (internal/secretconn; the
// Merlin variant for cometbft, tm2's pre-Merlin one for native, each side
// checking the other's identity key), as validators run them; over Unix
// sockets the protocol runs on the socket. The guard's state is in memory
// (its syncs cost nothing) or, in the -durable rows, in a state file in a
// temporary directory on disk (guard.DirFS), synced once per sign.
//
// Besides the table's metrics each row reports, per sign:
//
//   - added-ms/op: the validator's view of the sign (the client's call,
//     from the request written to the answer decoded) minus the key's own
//     SignContext, timed around it: framing, encoding, the sockets, the
//     SecretConnection, the guard and its state write — what the remote
//     signer adds to the backend. The latency analysis measured ~0.5 ms for
//     gnokms (docs/latency-profiles.md §1);
//   - backend-ms/op: the key's SignContext;
//   - fsync/op and fsync-ms/op: the guard's state syncs and the time they
//     took, writes included (guard.Stats).
//
// The rows sign vote-sized tm2 sign bytes at rising heights (voteMessages),
// a prevote of 108 B and a proposal of 128.
var privvalPayloads = []int{108, 128}

func init() { registerRemoteRows("privval", openPrivval) }

// registerRemoteRows registers the rows <prefix>-<protocol>-<unix|tcp>[-durable],
// each opened by open.
func registerRemoteRows(prefix string, open func(proto, network string, durable bool) func(context.Context, Params) (*Instance, error)) {
	for _, proto := range []string{"cometbft", "native"} {
		for _, network := range []string{"unix", "tcp"} {
			for _, durable := range []bool{false, true} {
				name := prefix + "-" + proto + "-" + network
				if durable {
					name += "-durable"
				}
				Register(Backend{Name: name, Algorithm: signer.Ed25519, Validator: true, Payloads: privvalPayloads,
					Messages: voteMessages, Open: open(proto, network, durable)})
			}
		}
	}
}

// timedKey is a signer.Signer whose SignContext is timed: the backend's
// share of a sign.
type timedKey struct {
	signer.Signer
	nanos atomic.Int64
}

func (k *timedKey) SignContext(ctx context.Context, msg []byte) ([]byte, error) {
	start := time.Now()
	sig, err := k.Signer.SignContext(ctx, msg)
	k.nanos.Add(int64(time.Since(start)))
	return sig, err
}

// Unwrap returns the key, so that signer.AlgorithmOf sees through.
func (k *timedKey) Unwrap() signer.Signer { return k.Signer }

// privvalRow is one opened remote-signer row.
type privvalRow struct {
	key  *timedKey
	g    *guard.Guard
	view atomic.Int64 // nanoseconds of client calls

	call func(ctx context.Context, msg []byte) ([]byte, error)

	stop    context.CancelFunc
	done    chan error // the signer's Run or Serve, once started
	started bool
	closers []func() error
}

func openPrivval(proto, network string, durable bool) func(context.Context, Params) (*Instance, error) {
	return func(ctx context.Context, _ Params) (inst *Instance, err error) {
		k, err := inprocess.Generate(signer.Ed25519)
		if err != nil {
			return nil, err
		}
		r := &privvalRow{key: &timedKey{Signer: k}}
		defer func() {
			if err != nil {
				r.close()
			}
		}()
		cfg := guard.Config{AutoInit: true, FS: &guard.MemFS{}}
		if durable {
			dir, err := os.MkdirTemp("", "signerkit-privval-")
			if err != nil {
				return nil, err
			}
			r.closers = append(r.closers, func() error { return os.RemoveAll(dir) })
			cfg.FS = guard.DirFS(dir)
		}
		if r.g, err = guard.New(r.key, cfg); err != nil {
			return nil, err
		}
		r.closers = append(r.closers, r.g.Close)
		signerHS, nodeHS := privvalHandshakes(proto, network)
		runCtx, stop := context.WithCancel(context.Background())
		r.stop, r.done = stop, make(chan error, 1)
		octx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		switch proto {
		case "cometbft":
			err = r.openCometBFT(octx, runCtx, network, signerHS, nodeHS)
		default:
			err = r.openNative(octx, runCtx, network, signerHS, nodeHS)
		}
		if err != nil {
			return nil, err
		}
		return &Instance{Sign: r.sign, Public: k.Public(), Algorithm: signer.Ed25519, Close: r.close, Metrics: r.metrics}, nil
	}
}

func (r *privvalRow) openCometBFT(ctx, runCtx context.Context, network string, signerHS, nodeHS privval.Handshake) error {
	ln, err := privvaltest.NewListener(network, privval.GnoTMKMS)
	if err != nil {
		return err
	}
	r.closers = append(r.closers, ln.Close)
	ln.Handshake = nodeHS
	e, err := privval.NewEndpoint(r.g, privval.Config{Dialect: privval.GnoTMKMS, Network: ln.Network(), Address: ln.Address(),
		Handshake: signerHS, MinBackoff: time.Millisecond})
	if err != nil {
		return err
	}
	r.started = true
	go func() { r.done <- e.Run(runCtx) }()
	c, err := ln.Accept(ctx)
	if err != nil {
		return err
	}
	r.closers = append(r.closers, c.Close)
	r.call = func(ctx context.Context, msg []byte) ([]byte, error) {
		m, err := signbytes.ParseTM2(msg)
		if err != nil {
			return nil, err
		}
		if m.Phase == signbytes.Proposal {
			p := &privvaltest.Proposal{Height: m.Height, Round: int32(m.Round), POLRound: int32(m.POLRound),
				BlockID: m.BlockID, Timestamp: m.Timestamp}
			start := time.Now()
			sp, err := c.SignProposal(ctx, m.ChainID, p)
			r.view.Add(int64(time.Since(start)))
			if err != nil {
				return nil, err
			}
			return sp.Signature, nil
		}
		v := &privvaltest.Vote{Phase: m.Phase, Height: m.Height, Round: int32(m.Round), BlockID: m.BlockID, Timestamp: m.Timestamp}
		start := time.Now()
		sv, err := c.SignVote(ctx, m.ChainID, v)
		r.view.Add(int64(time.Since(start)))
		if err != nil {
			return nil, err
		}
		if !sv.Timestamp.Equal(m.Timestamp) {
			return nil, fmt.Errorf("bench: the signer gave back an earlier signature (timestamp %v)", sv.Timestamp)
		}
		return sv.Signature, nil
	}
	return nil
}

func (r *privvalRow) openNative(ctx, runCtx context.Context, network string, signerHS, nodeHS privval.Handshake) error {
	addr := "127.0.0.1:0"
	if network == "unix" {
		dir, err := os.MkdirTemp("", "pvb")
		if err != nil {
			return err
		}
		r.closers = append(r.closers, func() error { return os.RemoveAll(dir) })
		addr = dir + "/s"
	}
	ln, err := net.Listen(network, addr)
	if err != nil {
		return err
	}
	s, err := privval.NewServer(r.g, privval.ServerConfig{Handshake: signerHS})
	if err != nil {
		ln.Close()
		return err
	}
	r.started = true
	go func() { r.done <- s.Serve(runCtx, ln) }()
	return r.dialNative(ctx, ln.Addr(), nodeHS)
}

func (r *privvalRow) sign(ctx context.Context, msg []byte) ([]byte, error) { return r.call(ctx, msg) }

func (r *privvalRow) metrics() map[string]float64 { return r.metricsWith(r.g.Stats()) }

// close stops the signer, waits for it and releases everything, in the
// reverse order of opening.
func (r *privvalRow) close() error {
	var errs []error
	if r.stop != nil {
		r.stop()
	}
	if r.started {
		if err := <-r.done; !errors.Is(err, context.Canceled) {
			errs = append(errs, err)
		}
	}
	for i := len(r.closers) - 1; i >= 0; i-- {
		if err := r.closers[i](); err != nil && !errors.Is(err, net.ErrClosed) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// privvalHandshakes returns the signer's and the validator's Handshake for
// a row: none over Unix sockets, a SecretConnection over TCP with each
// side allowing only the other's identity key.
func privvalHandshakes(proto, network string) (signerHS, nodeHS privval.Handshake) {
	if network != "tcp" {
		return nil, nil
	}
	v := secretconn.Merlin
	if proto == "native" {
		v = secretconn.PreMerlin
	}
	signerID := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{1}, ed25519.SeedSize))
	nodeID := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{2}, ed25519.SeedSize))
	hs := func(id ed25519.PrivateKey, allow ed25519.PublicKey) privval.Handshake {
		return func(ctx context.Context, conn net.Conn) (net.Conn, ed25519.PublicKey, error) {
			sc, err := secretconn.Handshake(ctx, conn, id, v)
			if err != nil {
				return nil, nil, err
			}
			if !sc.RemotePubKey().Equal(allow) {
				return nil, nil, fmt.Errorf("bench: peer %x is not allowed", sc.RemotePubKey())
			}
			return sc, sc.RemotePubKey(), nil
		}
	}
	return hs(signerID, nodeID.Public().(ed25519.PublicKey)), hs(nodeID, signerID.Public().(ed25519.PublicKey))
}
