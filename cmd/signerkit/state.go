package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/signerkit/signerkit/daemon"
	"github.com/signerkit/signerkit/guard"
)

func cmdState(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprintln(stderr, "signerkit state: show or init")
		return errUsage
	}
	fs := newFlags("state "+args[0], stderr)
	path := fs.String("config", "signerkit.toml", "the config file")
	chain := fs.String("chain", "", "the chain id (state init; default: the config's only chain)")
	height := fs.Int64("height", -1, "state init: sign nothing below this height")
	if err := fs.Parse(args[1:]); err != nil {
		return errUsage
	}
	cfg, err := daemon.LoadConfig(*path)
	if err != nil {
		return err
	}
	ctx := context.Background()
	switch args[0] {
	case "show":
		states, err := daemon.ShowState(ctx, cfg)
		if err != nil {
			return err
		}
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "CHAIN\tHEIGHT\tROUND\tSTEP\tKEY\tNOTE")
		for _, s := range states {
			note := ""
			switch {
			case errors.Is(s.Err, guard.ErrNoState):
				note = "no state: run `signerkit state init`"
			case s.Err != nil:
				note = s.Err.Error()
			case s.Signature == nil:
				note = "initialised, nothing signed yet"
			}
			key := "(bound at first start)"
			if s.Key != nil {
				key = fmt.Sprintf("%X", []byte(s.Key))
			}
			fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%s\t%s\n", s.ChainID, s.Height, s.Round, stepName(s.Step), key, note)
		}
		return tw.Flush()
	case "init":
		if *height < 0 {
			fmt.Fprintln(stderr, "signerkit state init: -height H is required: one more than the last height any earlier signer of this key may have signed (1 for a new chain)")
			return errUsage
		}
		id := *chain
		if id == "" {
			if len(cfg.Chains) != 1 {
				fmt.Fprintln(stderr, "signerkit state init: the config has several chains: name one with -chain")
				return errUsage
			}
			id = cfg.Chains[0].ID
		}
		if err := daemon.InitState(ctx, cfg.StateDir, id, *height); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "chain %s: signs nothing below height %d\n", id, *height)
		return nil
	}
	fmt.Fprintf(stderr, "signerkit state: unknown %q: show or init\n", args[0])
	return errUsage
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
