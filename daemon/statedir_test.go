package daemon

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/signerkit/signerkit/guard"
	"github.com/signerkit/signerkit/privval"
	"github.com/signerkit/signerkit/privval/privvaltest"
	"github.com/signerkit/signerkit/signbytes"
)

// stateFile returns the path of the test chain's state file in dir.
func stateFile(t *testing.T, dir string) string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "*.signstate"))
	if err != nil || len(m) != 1 {
		t.Fatalf("state files in %s: %v, %v", dir, m, err)
	}
	return m[0]
}

// TestDamagedStateRefused: with one slot of the state file damaged, the
// daemon starts but signs nothing for the chain: the validator's request
// is refused, an ERROR is logged, signerkit_state_damaged is 1 and
// /readyz answers 503. The file is left as it is. After RepairState,
// refused while the daemon runs, the chain signs from the new height.
// (Before, the guard fell back to the intact slot and signed a second
// prevote at the height/round/step the damaged slot held.)
func TestDamagedStateRefused(t *testing.T) {
	t.Parallel()
	f := newFixture(t, ProtocolCometBFT038, privval.V038)
	f.signHeight(5)
	f.c.Close()
	f.shutdown()
	path := stateFile(t, f.cfg.StateDir)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := guard.Inspect(guard.DirFS(f.cfg.StateDir), chainID)
	if err != nil || rep.Err != nil {
		t.Fatal(rep, err)
	}
	newer := 0
	if rep.Slots[1].Seq > rep.Slots[0].Seq {
		newer = 1
	}
	b[newer*4096+100] ^= 0x10 // the precommit at 5: the newest state
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}

	logw := &logSink{}
	if err := f.start(Options{Logger: slog.New(slog.NewTextHandler(logw, nil))}); err != nil {
		t.Fatalf("New with a damaged state file: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if f.c, err = f.ln.Accept(ctx); err != nil {
		t.Fatal(err)
	}
	defer f.c.Close()
	// A conflicting precommit at 5/0: the old code, falling back to the
	// intact slot's prevote, signed it over another block.
	_, err = f.c.SignVote(ctx, chainID, &privvaltest.Vote{Phase: signbytes.Precommit, Height: 5, BlockID: block(5, 9),
		Timestamp: baseTime, ValidatorAddress: make([]byte, 20)})
	var rse *privvaltest.RemoteSignerError
	if !errors.As(err, &rse) {
		t.Fatalf("a conflicting precommit at 5/0 with the newest slot damaged: %v", err)
	}
	if _, err := f.c.SignVote(ctx, chainID, &privvaltest.Vote{Phase: signbytes.Prevote, Height: 6, BlockID: block(6, 1),
		Timestamp: baseTime, ValidatorAddress: make([]byte, 20)}); !errors.As(err, &rse) {
		t.Fatalf("a prevote at 6 with the state damaged: %v", err)
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(after, b) {
		t.Fatal("the damaged state file was written")
	}
	if v := metric(f.scrape(), "signerkit_state_damaged", "chain", chainID); v != 1 {
		t.Fatalf("signerkit_state_damaged = %v", v)
	}
	if code, body := f.get("/readyz"); code != 503 || !strings.Contains(body, "state damaged") {
		t.Fatalf("/readyz: %d %q", code, body)
	}
	if l := logw.String(); !strings.Contains(l, "level=ERROR") || !strings.Contains(l, "slot") {
		t.Fatalf("no ERROR naming the slot in:\n%s", l)
	}
	// Repair is refused while the daemon holds the state directory.
	if _, err := RepairState(ctx, f.cfg.StateDir, chainID, 6); !errors.Is(err, ErrStateInUse) {
		t.Fatalf("RepairState beside the daemon: %v", err)
	}
	f.c.Close()
	f.shutdown()
	if _, err := RepairState(ctx, f.cfg.StateDir, chainID, 5); !errors.As(err, new(*guard.DoubleSignError)) {
		t.Fatalf("RepairState at the damaged height: %v", err)
	}
	kept, err := RepairState(ctx, f.cfg.StateDir, chainID, 6)
	if err != nil {
		t.Fatal(err)
	}
	if k, _ := os.ReadFile(kept); !bytes.Equal(k, b) {
		t.Fatalf("the damaged file was not kept as %s", kept)
	}
	if err := f.start(Options{}); err != nil {
		t.Fatal(err)
	}
	if f.c, err = f.ln.Accept(ctx); err != nil {
		t.Fatal(err)
	}
	if v := metric(f.scrape(), "signerkit_state_damaged", "chain", chainID); v != 0 {
		t.Fatalf("signerkit_state_damaged after repair = %v", v)
	}
	f.signHeight(6)
}

func TestCheckStateDir(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	mk := func(name string, mode os.FileMode) string {
		p := filepath.Join(base, name)
		if err := os.Mkdir(p, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := mk("good", 0o700)
	if err := CheckStateDir(good); err != nil {
		t.Fatal(err)
	}
	if err := CheckStateDir(mk("readable", 0o750)); err != nil {
		t.Fatalf("a directory its group may read: %v (a warning, not a refusal)", err)
	}
	link := filepath.Join(base, "link")
	if err := os.Symlink(good, link); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(base, "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ dir, want string }{
		{mk("group-writable", 0o770), "writable by others"},
		{mk("world-writable", 0o707), "writable by others"},
		{link, "symbolic link"},
		{link + "/", "symbolic link"},
		{file, "not a directory"},
		{filepath.Join(base, "missing"), "signerkit init"},
	} {
		err := CheckStateDir(c.dir)
		var se *StateDirError
		if !errors.As(err, &se) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want a *StateDirError with %q", c.dir, err, c.want)
		}
	}
	// New refuses such a directory before it opens anything.
	cfg := &Config{StateDir: filepath.Join(base, "group-writable"), Chains: []ChainConfig{{ID: chainID, Protocol: ProtocolCometBFT038,
		Key: "inprocess:file=/nonexistent", Validators: []ValidatorConfig{{Addr: "unix:///nonexistent.sock"}}}}}
	if _, err := New(context.Background(), cfg, Options{}); !errors.As(err, new(*StateDirError)) {
		t.Fatalf("New on a group-writable state_dir: %v", err)
	}
}

// TestStateLock: one holder at a time; the second is told the first's
// pid; StateDirInUse sees it without writing.
func TestStateLock(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if StateDirInUse(dir) {
		t.Fatal("in use before any lock")
	}
	l, err := LockStateDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !StateDirInUse(dir) {
		t.Fatal("not in use while locked")
	}
	_, err = LockStateDir(dir)
	var ue *StateInUseError
	if !errors.Is(err, ErrStateInUse) || !errors.As(err, &ue) || ue.PID != os.Getpid() ||
		!strings.Contains(err.Error(), fmt.Sprintf("pid %d", os.Getpid())) || !strings.Contains(err.Error(), "stop it first") || strings.Contains(err.Error(), "move") {
		t.Fatalf("second lock: %v", err)
	}
	// Without a pid in the lock file, the message says how to find it.
	if err := os.WriteFile(filepath.Join(dir, LockFile), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LockStateDir(dir); !errors.As(err, &ue) || ue.PID != 0 || !strings.Contains(err.Error(), "fuser -v") {
		t.Fatalf("second lock, no pid: %v", err)
	}
	l.Close()
	if StateDirInUse(dir) {
		t.Fatal("in use after Close")
	}
	// A symbolic link planted at the lock file's name is not followed.
	dir2 := t.TempDir()
	target := filepath.Join(t.TempDir(), "target")
	if err := os.WriteFile(target, []byte("keep"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, filepath.Join(dir2, LockFile)); err != nil {
		t.Fatal(err)
	}
	if _, err := LockStateDir(dir2); err == nil {
		t.Fatal("locked through a symbolic link")
	}
	if b, _ := os.ReadFile(target); string(b) != "keep" {
		t.Fatalf("the link's target was written: %q", b)
	}
}
