package threshold

import "sync/atomic"

// ServeStats counts a Party's requests by outcome over its life.
type ServeStats struct {
	// Shares is the number of signature shares sent.
	Shares uint64
	// Refused is the number of sign requests refused as double signs by
	// the party's guard.
	Refused uint64
	// NonceUsed is the number of sign requests for a nonce pair already
	// used or released.
	NonceUsed uint64
	// Failed is the number of other sign requests that failed (invalid,
	// too large, storage errors).
	Failed uint64
	// Presigned is the number of nonce commitments handed out.
	Presigned uint64
}

type partyStats struct {
	shares, refused, nonceUsed, failed, presigned atomic.Uint64
}

// noteSign counts a sign request's outcome.
func (s *partyStats) noteSign(code byte, err error) {
	switch {
	case err == nil:
		s.shares.Add(1)
	case code == codeDoubleSign:
		s.refused.Add(1)
	case code == codeNonceUsed:
		s.nonceUsed.Add(1)
	default:
		s.failed.Add(1)
	}
}

// ServeStats returns the party's request counts.
func (p *Party) ServeStats() ServeStats {
	return ServeStats{Shares: p.stats.shares.Load(), Refused: p.stats.refused.Load(), NonceUsed: p.stats.nonceUsed.Load(),
		Failed: p.stats.failed.Load(), Presigned: p.stats.presigned.Load()}
}
