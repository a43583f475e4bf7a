package threshold

import (
	"slices"

	"github.com/signerkit/signerkit/signbytes"
)

// precommitSigners is a precommit the coordinator signed and the members
// whose shares made it.
type precommitSigners struct {
	chainID       string
	height, round int64
	set           []*memberState
}

// preferFor looks at msg: for a CometBFT v0.38 vote extension it returns
// the members that made the shares of its precommit, which choose asks
// first, since a party's guard signs an extension only right after the
// precommit it signed itself, and any other party refuses it. For a
// precommit it returns the record that signed files once the precommit
// is signed. Anything else gets neither.
func (s *Signer) preferFor(msg []byte) (*precommitSigners, map[*memberState]bool) {
	m, err := signbytes.Parse(msg)
	if err != nil {
		return nil, nil
	}
	switch m.Phase {
	case signbytes.Precommit:
		return &precommitSigners{chainID: m.ChainID, height: m.Height, round: m.Round}, nil
	case signbytes.VoteExtension:
	default:
		return nil, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	pc := s.precommit
	if pc.chainID != m.ChainID || pc.height != m.Height || pc.round != m.Round {
		return nil, nil
	}
	prefer := make(map[*memberState]bool, len(pc.set))
	for _, ms := range pc.set {
		prefer[ms] = true
	}
	return nil, prefer
}

// signed files the members that made a precommit's signature, for its
// extension.
func (s *Signer) signed(pc *precommitSigners, set []*memberState) {
	if pc == nil {
		return
	}
	rec := *pc
	rec.set = slices.Clone(set)
	s.mu.Lock()
	s.precommit = rec
	s.mu.Unlock()
}
