package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/signerkit/signerkit/daemon"
	"github.com/signerkit/signerkit/guard"
)

func cmdState(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprintln(stderr, "signerkit state: show, init, import or repair")
		return errUsage
	}
	if args[0] == "import" {
		return cmdStateImport(args[1:], stdout, stderr)
	}
	fs := newFlags("state "+args[0], stderr)
	path := fs.String("config", "signerkit.toml", "the config file")
	chain, height := new(string), new(int64(-1))
	switch args[0] {
	case "init":
		fs.StringVar(chain, "chain", "", "the chain id (default: the config's only chain)")
		fs.Int64Var(height, "height", -1, "sign nothing below this height: one more than the last height any earlier signer of this key may have signed (1 for a new chain)")
	case "repair":
		fs.StringVar(chain, "chain", "", "the chain id (default: the config's only chain)")
		fs.Int64Var(height, "height", -1, "start again at this height, above anything the validator signed")
	}
	if err := parseFlags(fs, args[1:]); err != nil {
		return err
	}
	cfg, err := daemon.LoadConfigToInspect(*path)
	if err != nil {
		return err
	}
	ctx := context.Background()
	chainID := func(cmd string) (string, error) {
		if *chain != "" {
			return *chain, nil
		}
		if len(cfg.Chains) != 1 {
			fmt.Fprintf(stderr, "signerkit state %s: the config has several chains: name one with -chain\n", cmd)
			return "", errUsage
		}
		return cfg.Chains[0].ID, nil
	}
	switch args[0] {
	case "show":
		return stateShow(ctx, cfg, stdout)
	case "init":
		if *height < 0 {
			fmt.Fprintln(stderr, "signerkit state init: -height H is required: one more than the last height any earlier signer of this key may have signed (1 for a new chain)")
			return errUsage
		}
		id, err := chainID("init")
		if err != nil {
			return err
		}
		if err := daemon.InitStateOf(ctx, cfg, id, *height); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "chain %s: signs nothing below height %d\n", id, *height)
		return nil
	case "repair":
		if *height < 1 {
			fmt.Fprintln(stderr, "signerkit state repair: -height H is required: one more than the last height this validator signed, as the chain shows it (see `signerkit state show`)")
			return errUsage
		}
		id, err := chainID("repair")
		if err != nil {
			return err
		}
		kept, err := daemon.RepairStateOf(ctx, cfg, id, *height)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "chain %s: the damaged state file is kept as %s; signs nothing below height %d\n", id, kept, *height)
		return nil
	}
	fmt.Fprintf(stderr, "signerkit state: unknown %q: show, init, import or repair\n", args[0])
	return errUsage
}

// stateShow prints each chain's state from the state directory, read-only
// and checksum-verified, whether a daemon runs or not; for a damaged file
// it says what each slot holds and what to do. It fails (exit 1) when a
// chain's state cannot be signed from.
func stateShow(ctx context.Context, cfg *daemon.Config, stdout io.Writer) error {
	states, running, err := daemon.ShowState(ctx, cfg)
	if err != nil {
		return err
	}
	if running {
		fmt.Fprintf(stdout, "a daemon is running on %s: this is its state as last synced\n\n", cfg.StateDir)
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CHAIN\tHEIGHT\tROUND\tSTEP\tKEY\tNOTE")
	var bad []daemon.ChainState
	for _, s := range states {
		note := ""
		switch {
		case errors.Is(s.Err, guard.ErrNoState):
			note = "no state: run `signerkit state init`"
		case errors.As(s.Err, new(*guard.CorruptError)):
			note = "DAMAGED: refusing to sign (below)"
			bad = append(bad, s)
		case s.Err != nil:
			note = s.Err.Error()
			bad = append(bad, s)
		case s.Signature == nil && s.Step != 0:
			note = "recorded ahead of its sign (a threshold key): signed again on request"
		case s.Signature == nil:
			note = "initialised, nothing signed yet"
		}
		key := "(bound at first start)"
		if s.Key != nil {
			key = fmt.Sprintf("ed25519:%x", []byte(s.Key))
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%s\t%s\n", s.ChainID, s.Height, s.Round, stepName(s.Step), key, note)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, s := range bad {
		explainDamage(stdout, cfg, s)
	}
	if len(bad) > 0 {
		return fmt.Errorf("signerkit state show: %d chain(s) cannot sign", len(bad))
	}
	return nil
}

// explainDamage says what a damaged state file holds and how to repair
// it.
func explainDamage(w io.Writer, cfg *daemon.Config, s daemon.ChainState) {
	fmt.Fprintf(w, "\nchain %s: %v\n", s.ChainID, s.Err)
	var ce *guard.CorruptError
	rep := s.Report
	if !errors.As(s.Err, &ce) || rep == nil {
		return
	}
	if rep.Size == 8192 {
		for i, sl := range rep.Slots {
			switch {
			case sl.Valid:
				fmt.Fprintf(w, "  slot %d: intact: %d/%d/%s (write #%d)\n", i, sl.Height, sl.Round, stepName(sl.Step), sl.Seq)
			case sl.HeaderRead:
				fmt.Fprintf(w, "  slot %d: DAMAGED (%s); its header, unverified, reads %d/%d/%s (write #%d)\n", i, sl.Damage, sl.Height, sl.Round, stepName(sl.Step), sl.Seq)
			default:
				fmt.Fprintf(w, "  slot %d: DAMAGED (%s); its header is unreadable\n", i, sl.Damage)
			}
		}
	} else {
		fmt.Fprintf(w, "  the file is %d bytes, not 8192\n", rep.Size)
	}
	lines := []string{
		"What happened: the file's checksums do not hold, so the newest state may be lost. A power cut during a write or a failing disk does this; a killed process does not.",
		"The signer refuses to sign for this chain rather than fall back to an older state, from which it could sign a second, conflicting vote.",
		"What to do:",
		"  1. Find the last height this validator signed, on the chain itself (its precommits in the latest blocks, or the node's logs).",
		fmt.Sprintf("  2. Stop the daemon, then run: signerkit state repair -config %s -chain %s -height H", cfg.PathOrDefault(), s.ChainID),
		fmt.Sprintf("     with H above that height and above %d, the highest this file reads. The damaged file is kept beside the new one.", rep.RepairAbove),
		"  3. Check the disk (SMART, dmesg) before starting again.",
	}
	fmt.Fprintln(w, "  "+strings.Join(lines, "\n  "))
}

func stepName(s int8) string {
	switch s {
	case 0:
		return "-"
	case 1:
		return "proposal"
	case 2:
		return "prevote"
	case 3:
		return "precommit"
	}
	return fmt.Sprint(s)
}
