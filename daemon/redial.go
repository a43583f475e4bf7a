package daemon

import "time"

// DefaultRedialMaxBackoff is the default redial_max_backoff. A restarted
// CometBFT node gives a dialing signer a few seconds (3 s at start-up,
// measured on v0.38) before it gives up, so signerkit dials again at most
// half a second after the node's listener comes back: waits are drawn
// between half the cap and the cap.
const DefaultRedialMaxBackoff = 500 * time.Millisecond

// dialLogPeriod is the least time between two "not reachable" lines of
// one validator.
const dialLogPeriod = 10 * time.Second

func (c *Config) redialMaxBackoff() time.Duration {
	if c.RedialMaxBackoff == 0 {
		return DefaultRedialMaxBackoff
	}
	return c.RedialMaxBackoff
}
