package main

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/signerkit/signerkit/daemon"
	"github.com/signerkit/signerkit/ledger"
	"github.com/signerkit/signerkit/ledger/ledgersim"
	"github.com/signerkit/signerkit/privval"
	"github.com/signerkit/signerkit/privval/privvaltest"
	"github.com/signerkit/signerkit/signbytes"
	"github.com/signerkit/signerkit/signer"
)

const demoChain = "demo-chain"

// cmdDemo runs the whole path in one process: a simulated Ledger
// (ledgersim, its modeled device time reported as modeled) as the key,
// the daemon, and a validator side (privvaltest, in gno v1.7.1's tmkms
// dialect over a Unix socket) that signs a proposal, a prevote and a
// precommit per height and verifies every signature with crypto/ed25519.
func cmdDemo(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("demo", stderr)
	metrics := fs.String("metrics", "127.0.0.1:26661", "address of /metrics, /healthz and /readyz")
	interval := fs.Duration("interval", 250*time.Millisecond, "time between heights")
	heights := fs.Int64("heights", 0, "stop after this many heights (0: run until SIGINT)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "signerkit-demo-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	stateDir := filepath.Join(dir, "state")
	if err := os.Mkdir(stateDir, 0o700); err != nil {
		return err
	}
	if err := daemon.InitState(context.Background(), stateDir, demoChain, 1); err != nil {
		return err
	}
	dev, err := ledgersim.New(ledgersim.Config{Time: ledgersim.Accounted})
	if err != nil {
		return err
	}
	ln, err := privvaltest.NewListener("unix", privval.GnoTMKMS)
	if err != nil {
		return err
	}
	defer ln.Close()
	cfg := &daemon.Config{StateDir: stateDir, MetricsAddr: *metrics, Chains: []daemon.ChainConfig{{
		ID: demoChain, Protocol: daemon.ProtocolTM2TMKMS, Key: "ledger:",
		Validators: []daemon.ValidatorConfig{{Addr: "unix://" + ln.Address()}},
	}}}
	log := slog.New(slog.NewTextHandler(stderr, nil))
	opts := daemon.Options{Logger: log, Version: buildVersion(),
		Open: func(ctx context.Context, uri string) (signer.Signer, error) {
			return ledger.Open(ctx, ledger.Config{Dial: dev.Dialer()})
		}}
	fmt.Fprintf(stdout, "signerkit demo: a simulated Ledger (Nano S Plus profile, time accounted) signing for a gno tmkms-style validator on %s\n", ln.Address())

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	validatorDone := make(chan error, 1)
	go func() {
		validatorDone <- runDemoValidator(ctx, ln, dev.PublicKey(), *interval, *heights, stdout)
		cancel()
	}()
	err = serve(context.Background(), cfg, opts, log, func(d *daemon.Daemon) {
		fmt.Fprintf(stdout, "metrics: curl -s http://%s/metrics | grep -E 'signerkit_(request|sign_stage)_duration_seconds_(sum|count)'\n", d.MetricsAddr())
	})
	cancel()
	if verr := <-validatorDone; verr != nil && !errors.Is(verr, context.Canceled) && err == nil {
		err = verr
	}
	return err
}

// runDemoValidator plays the node: it accepts the signer's connection and
// asks for a proposal, prevote and precommit per height.
func runDemoValidator(ctx context.Context, ln *privvaltest.Listener, pub ed25519.PublicKey, interval time.Duration, heights int64, stdout io.Writer) error {
	var c *privvaltest.Client
	defer func() {
		if c != nil {
			c.Close()
		}
	}()
	for h := int64(1); heights == 0 || h <= heights; h++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		if c == nil {
			var err error
			if c, err = ln.Accept(ctx); err != nil {
				return err
			}
		}
		if err := demoHeight(ctx, c, pub, h); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			fmt.Fprintf(stdout, "height %d: %v\n", h, err)
			c.Close()
			c = nil
			continue
		}
		if h%20 == 1 {
			fmt.Fprintf(stdout, "height %d: proposal, prevote, precommit signed and verified\n", h)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(interval):
		}
	}
	p, _ := os.FindProcess(os.Getpid())
	return p.Signal(os.Interrupt) // stop the daemon as an operator would
}

func demoHeight(ctx context.Context, c *privvaltest.Client, pub ed25519.PublicKey, h int64) error {
	var hb [8]byte
	binary.BigEndian.PutUint64(hb[:], uint64(h))
	sum := sha256.Sum256(hb[:])
	part := make([]byte, 32)
	_, _ = rand.Read(part)
	block := signbytes.BlockID{Hash: sum[:], PartSetHeader: signbytes.PartSetHeader{Total: 1, Hash: part}}
	ts := time.Now().UTC()
	check := func(m signbytes.Message, sig []byte) error {
		m.Format, m.ChainID = signbytes.TM2, demoChain
		sb, err := m.Bytes()
		if err != nil {
			return err
		}
		if !ed25519.Verify(pub, sb, sig) {
			return fmt.Errorf("%s: the signature does not verify", m.Phase)
		}
		return nil
	}
	rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	p, err := c.SignProposal(rctx, demoChain, &privvaltest.Proposal{Height: h, POLRound: -1, BlockID: block, Timestamp: ts})
	if err != nil {
		return err
	}
	if err := check(signbytes.Message{Phase: signbytes.Proposal, Height: h, POLRound: -1, BlockID: block, Timestamp: p.Timestamp}, p.Signature); err != nil {
		return err
	}
	for _, phase := range []signbytes.Phase{signbytes.Prevote, signbytes.Precommit} {
		v, err := c.SignVote(rctx, demoChain, &privvaltest.Vote{Phase: phase, Height: h, BlockID: block, Timestamp: ts,
			ValidatorAddress: make([]byte, 20)})
		if err != nil {
			return err
		}
		if err := check(signbytes.Message{Phase: phase, Height: h, BlockID: block, Timestamp: v.Timestamp}, v.Signature); err != nil {
			return err
		}
	}
	return nil
}
