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

// precommitOf looks at msg. For a CometBFT v0.38 vote extension whose
// precommit this coordinator signed, it returns the members that did not
// make that precommit's shares, which sign leaves out of its first
// attempt: the extension goes first to the parties that have just signed
// its precommit. A party also signs an extension whose precommit it did
// not see (partyguard.go), so a retry or a hedge may go to the third. For
// a precommit it returns the record that signed files
// once the precommit is signed. The map is never nil.
func (s *Signer) precommitOf(msg []byte) (*precommitSigners, map[*memberState]bool) {
	others := map[*memberState]bool{}
	m, err := signbytes.Parse(msg)
	if err != nil {
		return nil, others
	}
	switch m.Phase {
	case signbytes.Precommit:
		return &precommitSigners{chainID: m.ChainID, height: m.Height, round: m.Round}, others
	case signbytes.VoteExtension:
	default:
		return nil, others
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	pc := s.precommit
	if pc.chainID != m.ChainID || pc.height != m.Height || pc.round != m.Round {
		return nil, others
	}
	for _, ms := range s.members {
		if !slices.Contains(pc.set, ms) {
			others[ms] = true
		}
	}
	return nil, others
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
