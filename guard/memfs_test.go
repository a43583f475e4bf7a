package guard_test

import (
	"context"
	"testing"

	"github.com/signerkit/signerkit/guard"
	"github.com/signerkit/signerkit/inprocess"
	"github.com/signerkit/signerkit/signer"
)

// TestMemFS checks that a Guard keeps its state in a MemFS (the FS
// itself is checked in internal/statefile).
func TestMemFS(t *testing.T) {
	var m guard.MemFS
	k, err := inprocess.Generate(signer.Ed25519)
	if err != nil {
		t.Fatal(err)
	}
	g, err := guard.New(k, guard.Config{FS: &m})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if err := g.Init(context.Background(), "c", 5); err != nil {
		t.Fatal(err)
	}
	if st, err := g.State(context.Background(), "c"); err != nil || st.Height != 5 {
		t.Fatalf("state %+v, %v", st, err)
	}
}
