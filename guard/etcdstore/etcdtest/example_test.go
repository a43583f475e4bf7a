package etcdtest_test

import (
	"testing"
	"time"

	"github.com/signerkit/signerkit/guard/etcdstore/etcdtest"
)

// In a test: a 3-member cluster, a member killed and brought back, and a
// proxy that drops a client's packets to one member.
func Example() {
	var t *testing.T // the test's
	c := etcdtest.Start(t, 3)
	p := etcdtest.NewProxy(t, c.Members[0].ClientAddr)
	c.Kill(c.Leader())
	p.Drop()
	// … a client of https://p.Addr sees nothing, the others elect a leader …
	p.Pass()
	for i := range c.Members {
		c.Restart(i)
	}
	c.WaitLeader(30 * time.Second)
}
