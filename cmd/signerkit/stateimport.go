package main

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/signerkit/signerkit/internal/fileopen"

	"github.com/signerkit/signerkit/daemon"
	"github.com/signerkit/signerkit/guard"
	"github.com/signerkit/signerkit/guard/migrate"
	"github.com/signerkit/signerkit/signer"
)

// cmdStateImport is `signerkit state import`: it reads another signer's
// state file and sets the chain's state just after it.
func cmdStateImport(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("state import", stderr)
	path := fs.String("config", "signerkit.toml", "the config file")
	chain := fs.String("chain", "", "the chain id (default: the config's only chain)")
	from := fs.String("from", "", "the old signer's state file: priv_validator_state.json (CometBFT, gno), tmkms's state file, horcrux's <chain>_priv_validator_state.json")
	node := fs.String("node", "", "a node's RPC address (http://host:26657): refuse a state behind the chain's latest height")
	force := fs.Bool("force", false, "import a state behind the -node's latest height")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		fmt.Fprintln(stderr, "signerkit state import: flags only, no arguments")
		return errUsage
	}
	if *from == "" {
		fmt.Fprintln(stderr, "signerkit state import: -from FILE is required: the old signer's state file, read after the old signer has stopped")
		return errUsage
	}
	cfg, err := daemon.LoadConfigToInspect(*path)
	if err != nil {
		return err
	}
	ch, err := pickChain(cfg, *chain)
	if err != nil {
		fmt.Fprintf(stderr, "signerkit state import: %v\n", err)
		return errUsage
	}
	st, err := readStateFile(*from)
	if err != nil {
		return err
	}
	if err := st.CheckChain(ch.ID); err != nil {
		return fmt.Errorf("signerkit state import: %s: %w", *from, err)
	}
	ctx := context.Background()
	if *node != "" {
		if err := checkNode(ctx, *node, ch.ID, st, *force, stdout); err != nil {
			return err
		}
	}
	if st, err = verifyLastSign(ctx, cfg, ch, st, stdout); err != nil {
		return err
	}
	next, exact, err := st.Resume(ch.ID)
	if err != nil {
		return fmt.Errorf("signerkit state import: %s: %w", *from, err)
	}
	if err := daemon.ImportStateOf(ctx, cfg, next); err != nil {
		if ds := (*guard.DoubleSignError)(nil); errors.As(err, &ds) {
			return fmt.Errorf("signerkit state import: chain %s already holds %d/%d/%s, at or after the imported %d/%d/%s: state import never moves a state back, and nothing changed. "+
				"If the file is the old signer's latest, the state here is already safe to sign from", ch.ID, ds.LastHeight, ds.LastRound, stepName(ds.LastStep), next.Height, next.Round, stepName(next.Step))
		}
		return err
	}
	reportImport(stdout, ch.ID, st, next, exact)
	return nil
}

// pickChain returns the chain named, or the config's only chain.
func pickChain(cfg *daemon.Config, id string) (daemon.ChainConfig, error) {
	for _, ch := range cfg.Chains {
		if ch.ID == id || id == "" && len(cfg.Chains) == 1 {
			return ch, nil
		}
	}
	if id == "" {
		return daemon.ChainConfig{}, errors.New("the config has several chains: name one with -chain")
	}
	return daemon.ChainConfig{}, fmt.Errorf("chain %q is not in the config", id)
}

// readStateFile reads and parses another signer's state file.
func readStateFile(path string) (migrate.State, error) {
	b, err := fileopen.ReadFile(path, migrate.MaxFileSize) // refuses a FIFO
	if err != nil {
		return migrate.State{}, fmt.Errorf("signerkit state import: %w", err)
	}
	st, err := migrate.Parse(b)
	if err != nil {
		return migrate.State{}, fmt.Errorf("signerkit state import: %s: %w", path, err)
	}
	return st, nil
}

// checkNode refuses a state behind the chain's latest height unless
// forced, and a node of another chain always.
func checkNode(ctx context.Context, node, chainID string, st migrate.State, force bool, stdout io.Writer) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	ns, err := migrate.FetchStatus(ctx, nil, node)
	if err != nil {
		return fmt.Errorf("signerkit state import: -node: %w", err)
	}
	if ns.Network != chainID {
		return fmt.Errorf("signerkit state import: the node %s is on chain %q, not %q", node, ns.Network, chainID)
	}
	if ns.CatchingUp {
		fmt.Fprintf(stdout, "note: the node %s is still catching up (at %d): the chain may be further on\n", node, ns.LatestHeight)
	}
	if st.Height >= ns.LatestHeight {
		return nil
	}
	if !force {
		return fmt.Errorf("signerkit state import: the state file's last sign is at height %d, behind the chain's latest height %d (node %s). "+
			"Either the file is stale (a copy, or the old signer or another one kept signing with this key after it was written), and importing it could sign a second vote at a height that key already signed, which is slashed; "+
			"or the validator was simply not signing (offline, jailed, or not yet in the validator set). "+
			"Make sure every other signer of this key is stopped and that this is its latest state, then run again with -force; "+
			"or, if unsure, run `signerkit state init -height %d` instead, which signs nothing at or below the chain's latest height",
			st.Height, ns.LatestHeight, node, ns.LatestHeight+1)
	}
	fmt.Fprintf(stdout, "warning: -force: importing a state at height %d, behind the chain's latest height %d\n", st.Height, ns.LatestHeight)
	return nil
}

// verifyLastSign checks the file's last signature under the chain's key.
// A key that cannot be opened now (a device away, a PIN not given) costs
// only the stored signature: the state is imported without it.
func verifyLastSign(ctx context.Context, cfg *daemon.Config, ch daemon.ChainConfig, st migrate.State, stdout io.Writer) (migrate.State, error) {
	if st.SignBytes == nil {
		return st, nil
	}
	lock, err := daemon.LockStateDir(cfg.StateDir)
	if err != nil {
		return st, fmt.Errorf("signerkit state import: %w", err)
	}
	defer lock.Close()
	s, err := signer.Open(ctx, ch.Key)
	if err != nil {
		fmt.Fprintf(stdout, "note: the key %s cannot be opened now (%v): the file's last signature is not checked and not kept; the chain resumes after that step without serving it again\n", daemon.RedactURI(ch.Key), err)
		st.SignBytes, st.Signature = nil, nil
		return st, nil
	}
	defer s.Close()
	pub, ok := s.Public().(ed25519.PublicKey)
	if !ok {
		return st, fmt.Errorf("signerkit state import: the key %s is not an Ed25519 key, which every chain's FilePV state is signed with", daemon.RedactURI(ch.Key))
	}
	if err := st.Verify(pub); err != nil {
		return st, fmt.Errorf("signerkit state import: %w (%X): the file is another validator key's state, or a horcrux cosigner's share state (<chain>_share_sign_state.json) rather than its <chain>_priv_validator_state.json; nothing changed", err, []byte(pub))
	}
	return st, nil
}

func reportImport(w io.Writer, chainID string, st migrate.State, next guard.State, exact bool) {
	fmt.Fprintf(w, "chain %s: imported the %s state: last signed %d/%d/%s", chainID, st.Format, st.Height, st.Round, stepName(st.Step))
	if st.Format == migrate.TMKMS {
		fmt.Fprintf(w, " (tmkms step %d)", st.FileStep)
	}
	fmt.Fprintln(w)
	switch {
	case next.SignBytes != nil:
		fmt.Fprintf(w, "signs only after %d/%d/%s; that message itself, asked again, gets its stored signature\n", next.Height, next.Round, stepName(next.Step))
	case exact:
		fmt.Fprintf(w, "signs from height %d, round %d on\n", next.Height, next.Round)
	default:
		fmt.Fprintf(w, "signs from height %d, round %d on: without the file's sign bytes the rest of round %d is skipped, never signed twice\n", next.Height, next.Round, st.Round)
	}
}
