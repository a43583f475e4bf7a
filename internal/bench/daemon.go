package bench

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/signerkit/signerkit/daemon"
	"github.com/signerkit/signerkit/guard"
	"github.com/signerkit/signerkit/inprocess"
	"github.com/signerkit/signerkit/privval"
	"github.com/signerkit/signerkit/privval/privvaltest"
	"github.com/signerkit/signerkit/signbytes"
	"github.com/signerkit/signerkit/signer"
)

// The daemon rows, daemon-<protocol>-<unix|tcp>[-durable]: the same
// in-process key, validator (privvaltest), sockets, SecretConnections and
// guard state as the privval row of the same name, served by the
// signerkit daemon (package daemon) as `signerkit start` runs it: its
// config checks, its backend wrapper (reopening, a trace per sign feeding
// the stage histograms, the backend histogram) and its per-request
// metrics (latency histogram, outcome counters, last height/round/step,
// connection state). Read each row's added-ms/op beside its privval row's,
// in one run: the difference is what the daemon adds to the library path,
// with a goal of at most 0.01 ms.
func init() { registerRemoteRows("daemon", openDaemon) }

func openDaemon(proto, network string, durable bool) func(context.Context, Params) (*Instance, error) {
	return func(ctx context.Context, p Params) (inst *Instance, err error) {
		chainID, err := benchChainID(p.Payload)
		if err != nil {
			return nil, err
		}
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
		dir, err := os.MkdirTemp("", "skd")
		if err != nil {
			return nil, err
		}
		r.closers = append(r.closers, func() error { return os.RemoveAll(dir) })
		cfg, opts, err := r.daemonState(ctx, dir, chainID, durable)
		if err != nil {
			return nil, err
		}
		ln, nodeHS, err := r.daemonValidator(cfg, dir, proto, network)
		if err != nil {
			return nil, err
		}
		d, err := daemon.New(ctx, cfg, opts)
		if err != nil {
			return nil, err
		}
		runCtx, stop := context.WithCancel(context.Background())
		r.stop, r.done, r.started = stop, make(chan error, 1), true
		go func() {
			if err := d.Run(runCtx); err != nil {
				r.done <- err
				return
			}
			r.done <- context.Canceled // as the privval rows' Run returns
		}()
		octx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		if ln != nil {
			err = r.acceptCometBFT(octx, ln)
		} else {
			err = r.dialNative(octx, d.Listeners()[0], nodeHS)
		}
		if err != nil {
			return nil, err
		}
		g := d.GuardStats
		return &Instance{Sign: r.sign, Public: k.Public(), Algorithm: signer.Ed25519, Close: r.close, Metrics: func() map[string]float64 {
			return r.metricsWith(g())
		}}, nil
	}
}

// daemonState makes a daemon row's double-sign state in dir, its chain
// at height 1, on disk when durable and else in memory, and returns the
// config of one chain on the row's key with the options that serve it.
func (r *privvalRow) daemonState(ctx context.Context, dir, chainID string, durable bool) (*daemon.Config, daemon.Options, error) {
	stateDir := filepath.Join(dir, "state")
	if err := os.Mkdir(stateDir, 0o700); err != nil {
		return nil, daemon.Options{}, err
	}
	opts := daemon.Options{Open: func(context.Context, string) (signer.Signer, error) { return r.key, nil }}
	var err error
	if durable {
		err = daemon.InitState(ctx, stateDir, chainID, 1)
	} else {
		mem := &guard.MemFS{}
		opts.StateFS = mem
		err = daemon.InitStateFS(ctx, mem, chainID, 1)
	}
	if err != nil {
		return nil, daemon.Options{}, err
	}
	cfg := &daemon.Config{StateDir: stateDir, Chains: []daemon.ChainConfig{{ID: chainID, Key: "bench:"}}}
	return cfg, opts, nil
}

// daemonValidator puts the validator node in cfg's chain: for cometbft a
// privvaltest listener the daemon dials, which it returns, else an address
// the daemon listens on; on TCP the signer's identity and the node's on
// the allowlist. It returns the node's handshake too.
func (r *privvalRow) daemonValidator(cfg *daemon.Config, dir, proto, network string) (*privvaltest.Listener, privval.Handshake, error) {
	ch := &cfg.Chains[0]
	// The same identities as the privval rows: the signer's seed 1,
	// the node's seed 2, each allowing only the other.
	signerID := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{1}, ed25519.SeedSize))
	nodeID := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{2}, ed25519.SeedSize))
	if network == "tcp" {
		cfg.IdentityKey = filepath.Join(dir, "identity.pem")
		if err := inprocess.WriteKeyFile(cfg.IdentityKey, signerID); err != nil {
			return nil, nil, err
		}
	}
	allow := []string{fmt.Sprintf("%x", []byte(nodeID.Public().(ed25519.PublicKey)))}
	_, nodeHS := privvalHandshakes(proto, network)

	var ln *privvaltest.Listener
	switch proto {
	case "cometbft":
		ch.Protocol = daemon.ProtocolTM2TMKMS
		var err error
		if ln, err = privvaltest.NewListener(network, privval.GnoTMKMS); err != nil {
			return nil, nil, err
		}
		r.closers = append(r.closers, ln.Close)
		ln.Handshake = nodeHS
		ch.Validators = []daemon.ValidatorConfig{{Addr: network + "://" + ln.Address()}}
	default:
		ch.Protocol = daemon.ProtocolTM2Remote
		addr := "127.0.0.1:0"
		if network == "unix" {
			addr = filepath.Join(dir, "s")
		}
		ch.Validators = []daemon.ValidatorConfig{{Addr: network + "://" + addr}}
	}
	if network == "tcp" {
		ch.Validators[0].Allow = allow
	}
	return ln, nodeHS, nil
}

// benchChainID is the chain id of the rows' vote messages.
func benchChainID(size int) (string, error) {
	m, err := signbytes.Parse(voteMessages(size)())
	if err != nil {
		return "", fmt.Errorf("bench: the vote messages do not parse: %w", err)
	}
	return m.ChainID, nil
}

// acceptCometBFT waits for the daemon's dial and signs through the
// connection as openCometBFT does.
func (r *privvalRow) acceptCometBFT(ctx context.Context, ln *privvaltest.Listener) error {
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
		start := time.Now()
		var sig []byte
		if m.Phase == signbytes.Proposal {
			var sp *privvaltest.Proposal
			sp, err = c.SignProposal(ctx, m.ChainID, &privvaltest.Proposal{Height: m.Height, Round: int32(m.Round),
				POLRound: int32(m.POLRound), BlockID: m.BlockID, Timestamp: m.Timestamp})
			if sp != nil {
				sig = sp.Signature
			}
		} else {
			var sv *privvaltest.Vote
			sv, err = c.SignVote(ctx, m.ChainID, &privvaltest.Vote{Phase: m.Phase, Height: m.Height, Round: int32(m.Round),
				BlockID: m.BlockID, Timestamp: m.Timestamp})
			if sv != nil {
				sig = sv.Signature
				if !sv.Timestamp.Equal(m.Timestamp) {
					err = errors.New("bench: the signer gave back an earlier signature")
				}
			}
		}
		r.view.Add(int64(time.Since(start)))
		return sig, err
	}
	return nil
}

// dialNative dials a gno native remote-signer listener (privval.Server's or
// the daemon's tm2-remote) as gno's client does, timing each sign.
func (r *privvalRow) dialNative(ctx context.Context, addr net.Addr, nodeHS privval.Handshake) error {
	c, err := privvaltest.DialNative(ctx, addr.Network(), addr.String(), nodeHS)
	if err != nil {
		return err
	}
	r.closers = append(r.closers, c.Close)
	r.call = func(ctx context.Context, msg []byte) ([]byte, error) {
		start := time.Now()
		sig, err := c.Sign(ctx, msg)
		r.view.Add(int64(time.Since(start)))
		return sig, err
	}
	return nil
}

// metricsWith reports the row's added and backend time and st's syncs.
func (r *privvalRow) metricsWith(st guard.Stats) map[string]float64 {
	ms := func(ns int64) float64 { return float64(ns) / float64(time.Millisecond) }
	view, backend := r.view.Load(), r.key.nanos.Load()
	return map[string]float64{
		"added-ms":   ms(view - backend),
		"backend-ms": ms(backend),
		"fsync":      float64(st.Syncs),
		"fsync-ms":   ms(int64(st.SyncTime)),
	}
}
