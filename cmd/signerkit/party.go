package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os/signal"
	"strings"
	"syscall"

	"github.com/signerkit/signerkit/hardening"
	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/threshold"
	"github.com/signerkit/signerkit/threshold/partyd"
)

// cmdParty runs `signerkit party`: one share of a threshold key, served to
// the coordinators over mutual TLS until SIGTERM or SIGINT; with
// -init-height, it makes the double-sign state of the chains that have
// none and exits; with -import-state, it sets a chain's state from the
// old signer's state file and exits.
func cmdParty(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("party", stderr)
	path := fs.String("config", "party.toml", "the party's config file")
	initHeight := fs.Int64("init-height", 0, "make the double-sign state of each chain that has none, starting at this height "+
		"(one more than the last height any signer of this key may have signed; 1 for a new chain), and exit")
	importFrom := fs.String("import-state", "", "set a chain's double-sign state from the old signer's state file "+
		"(priv_validator_state.json, tmkms's, horcrux's), as `state import` does for a daemon, and exit")
	chain := fs.String("chain", "", "with -import-state: the chain id (default: the party's only chain)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "signerkit party: unexpected argument %q\n", fs.Arg(0))
		return errUsage
	}
	initSet := false
	fs.Visit(func(f *flag.Flag) { initSet = initSet || f.Name == "init-height" })
	if scheme, err := threshold.ConfigScheme(*path); err != nil {
		return err
	} else if scheme == threshold.SchemeDKLS23 {
		if initSet || *importFrom != "" {
			return fmt.Errorf("signerkit party: %s serves a DKLS23 account key, which keeps no double-sign state: -init-height and -import-state do not apply: %w", *path, signer.ErrInvalidArgument)
		}
		return runDKLS23Party(*path, stderr)
	}
	setup, err := threshold.LoadPartyFile(*path)
	if err != nil {
		return err
	}
	defer setup.Close()
	if *importFrom != "" {
		if initSet {
			fmt.Fprintln(stderr, "signerkit party: -init-height and -import-state: choose one")
			return errUsage
		}
		return partyImportState(setup, *importFrom, *chain, stdout)
	}
	if initSet {
		done, err := setup.InitState(context.Background(), *initHeight)
		if err != nil {
			return err
		}
		if len(done) == 0 {
			fmt.Fprintf(stdout, "every chain of %s has its state already; nothing written\n", *path)
			return nil
		}
		fmt.Fprintf(stdout, "wrote the state of chain %s in %s: nothing below height %d is signed\n", strings.Join(done, ", "), setup.GuardDir, *initHeight)
		return nil
	}
	log := slog.New(slog.NewTextHandler(stderr, nil))
	if err := hardening.DisableCoreDumps(); err != nil {
		log.Warn("core dumps stay enabled: a crash could write the share to disk", "err", err)
	}
	s, err := partyd.New(setup, log)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	return s.Run(ctx)
}

// partyImportState is `signerkit party -import-state FILE`: the chain's
// state just after the old signer's last signature, as `state import`
// sets a daemon's.
func partyImportState(setup *threshold.PartySetup, from, chain string, stdout io.Writer) error {
	chains := setup.File.Chains
	if chain == "" {
		if len(chains) != 1 {
			return fmt.Errorf("signerkit party: the party signs for %d chains: name one with -chain: %w", len(chains), signer.ErrInvalidArgument)
		}
		chain = chains[0]
	}
	st, err := readStateFile(from)
	if err != nil {
		return err
	}
	if err := st.CheckChain(chain); err != nil {
		return fmt.Errorf("signerkit party: %s: %w", from, err)
	}
	next, exact, err := st.Resume(chain)
	if err != nil {
		return fmt.Errorf("signerkit party: %s: %w", from, err)
	}
	if err := setup.ImportState(context.Background(), next); err != nil {
		return fmt.Errorf("signerkit party: import-state: %w", err)
	}
	reportImport(stdout, chain, st, next, exact)
	return nil
}

// runDKLS23Party serves a DKLS23 share (a secp256k1 account key) until
// SIGTERM or SIGINT, with /metrics, /healthz and /readyz when
// metrics_addr is set. Its presignatures live in memory: a restart drops
// them, and the coordinator makes new ones.
func runDKLS23Party(path string, stderr io.Writer) error {
	setup, err := threshold.LoadDKLS23PartyFile(path)
	if err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(stderr, nil))
	if err := hardening.DisableCoreDumps(); err != nil {
		log.Warn("core dumps stay enabled: a crash could write the share to disk", "err", err)
	}
	s, err := partyd.NewDKLS23(setup, log)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	return s.Run(ctx)
}
