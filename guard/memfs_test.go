package guard_test

import (
	"context"
	"errors"
	"io/fs"
	"testing"

	"github.com/signerkit/signerkit/guard"
	"github.com/signerkit/signerkit/inprocess"
	"github.com/signerkit/signerkit/signer"
)

// TestMemFS checks MemFS as an FS: a created file reads back, a second
// Create of a name fails, a missing name is fs.ErrNotExist, and a Guard
// keeps its state in it.
func TestMemFS(t *testing.T) {
	var m guard.MemFS
	if _, err := m.Open("x"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Open of a missing file: %v", err)
	}
	if err := m.Create("x", []byte("abc")); err != nil {
		t.Fatal(err)
	}
	if err := m.Create("x", nil); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("second Create: %v", err)
	}
	f, err := m.Open("x")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte("Z"), 4); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, 5)
	if n, _ := f.ReadAt(got, 0); n != 5 || string(got) != "abc\x00Z" {
		t.Fatalf("read back %q", got[:n])
	}

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
