package daemon

import (
	"context"
	"fmt"

	"github.com/signerkit/signerkit/guard"
)

// ImportState sets chainID's state to st, read from another signer's
// state file (package guard/migrate): only what comes strictly after it
// is signed. It refuses to lower a state (a *guard.DoubleSignError). It
// takes the state directory's lock, so it is refused (ErrStateInUse)
// while the daemon runs.
func ImportState(ctx context.Context, stateDir string, st guard.State) error {
	// A fresh host, as a migration usually is: made as state init makes it.
	if err := makeStateDir(stateDir); err != nil {
		return err
	}
	l, err := LockStateDir(stateDir)
	if err != nil {
		return err
	}
	defer l.Close()
	return importState(ctx, guard.Config{Dir: stateDir}, st)
}

func importState(ctx context.Context, cfg guard.Config, st guard.State) error {
	g, err := guard.New(noKey{}, cfg)
	if err != nil {
		return fmt.Errorf("signerkit: %w", err)
	}
	defer g.Close()
	if err := g.Import(ctx, st); err != nil {
		return fmt.Errorf("signerkit: state import: %w", err)
	}
	return nil
}
