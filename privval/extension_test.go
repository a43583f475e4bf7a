package privval

import (
	"errors"
	"testing"
	"time"
)

// A v0.38 precommit for a block and its extension are signed together:
// the key is asked for both before it answers either, and the answer
// carries both signatures only once the precommit is recorded. A
// refused or failed precommit gets no extension signature.
func TestEndpointSignsExtensionWithPrecommit(t *testing.T) {
	_, k, ln, _ := startEndpoint(t, V038, "unix", Config{ChainID: chainID})
	n := accept(t, ln, V038)
	pc := testVote(typePrecommit, 3, 0, 1)
	pc.Extension = []byte("app data")

	entered, release := k.Hold()
	answer := make(chan response, 1)
	go func() { answer <- n.call(encSignVoteRequest(pc, chainID, V038)) }()
	for i := range 2 {
		select {
		case <-entered:
		case <-time.After(10 * time.Second):
			close(release)
			t.Fatalf("the key was asked for %d signs at once, want the precommit and its extension", i)
		}
	}
	close(release)
	r := <-answer
	if r.err != nil || r.vote == nil {
		t.Fatalf("precommit: %+v", r)
	}
	verify(t, k.PublicKey(), voteSignBytes(t, r.vote, chainID, V038.format()), r.vote.Signature)
	verify(t, k.PublicKey(), extensionSignBytes(t, pc, chainID), r.vote.ExtensionSignature)
	signs := k.Signs()

	// A conflicting precommit: refused, no signature of either kind, and
	// the key is not asked for the extension.
	conflict := testVote(typePrecommit, 3, 0, 2)
	conflict.Extension = []byte("other data")
	r = n.call(encSignVoteRequest(conflict, chainID, V038))
	if r.err == nil || r.err.Code != CodeDoubleSign || r.vote != nil && (r.vote.Signature != nil || r.vote.ExtensionSignature != nil) {
		t.Fatalf("conflicting precommit: %+v", r)
	}
	if k.Signs() != signs {
		t.Fatalf("the key signed %d times for a refused precommit", k.Signs()-signs)
	}

	// The key fails: no extension signature goes out either.
	k.SetErr(errors.New("unplugged"))
	r = n.call(encSignVoteRequest(testVote(typePrecommit, 4, 0, 1), chainID, V038))
	if r.err == nil || r.vote != nil && r.vote.ExtensionSignature != nil {
		t.Fatalf("failed precommit: %+v", r)
	}
}
