package keybase

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/signerkit/signerkit/signer"
)

// Writers in two processes race to create the same keys and to change one
// key's passphrase. Each name goes to exactly one writer, whose key it
// holds, and every file stays whole and opens. Both processes start racing
// together and pause between checking a name and renaming onto it, so
// without the lock file both would take names (this test fails with
// tryLock always succeeding).
func TestStoreTwoProcesses(t *testing.T) {
	if !crossProcessLock {
		t.Skip("no lock file on this system")
	}
	s := testStore(t)
	ctx := context.Background()
	if _, err := s.with(secretOf("p0"), UnlockOnce).GenerateKey(ctx, signer.Ed25519, "shared"); err != nil {
		t.Fatal(err)
	}
	cmd := writerProcess(s)
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	child := bufio.NewReader(stdout)
	if line, _ := child.ReadString('\n'); line != "READY\n" {
		more, _ := io.ReadAll(child)
		t.Fatalf("writer process: %v\n%s%s", cmd.Wait(), line, more)
	}
	rest := make(chan []byte, 1)
	go func() { b, _ := io.ReadAll(child); rest <- b }()
	mine := raceWriter(t, s, "parent")
	out := <-rest
	if err := cmd.Wait(); err != nil {
		t.Fatalf("writer process: %v\n%s", err, out)
	}
	var theirs map[string]string
	for line := range strings.Lines(string(out)) {
		if rest, ok := strings.CutPrefix(line, "WON "); ok {
			if err := json.Unmarshal([]byte(rest), &theirs); err != nil {
				t.Fatal(err)
			}
		}
	}
	if theirs == nil {
		t.Fatalf("writer process reported nothing:\n%s", out)
	}
	for i := range raceNames {
		name := fmt.Sprintf("race-%d", i)
		m, t2 := mine[name], theirs[name]
		if (m == "") == (t2 == "") {
			t.Errorf("%s: parent won %q, child won %q: want exactly one", name, m, t2)
			continue
		}
		info, err := s.KeyInfo(ctx, name)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if got := fmt.Sprintf("%x", info.Public); got != m+t2 {
			t.Errorf("%s holds %s, but the winner made %s", name, got, m+t2)
		}
		if _, err := s.OpenKey(ctx, signer.KeyRef{Label: name}); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := openAny(ctx, s, "shared"); err != nil {
		t.Errorf("shared: %v", err)
	}
	t.Logf("parent won %d names, child %d", len(mine), len(theirs))
}

const raceNames = 12

// raceWriter creates race-0 … race-11, taking the names the other process
// has not, and changes the passphrase of "shared" between p0 and p1 as it
// goes, pausing in each rename between the check and the rename. It
// returns the public keys of the names it won.
func raceWriter(t testing.TB, s *Store, who string) map[string]string {
	testHookChecked = func() { time.Sleep(3 * time.Millisecond) }
	defer func() { testHookChecked = nil }()
	ctx := context.Background()
	won := map[string]string{}
	for i := range raceNames {
		name := fmt.Sprintf("race-%d", i)
		info, err := s.GenerateKey(ctx, signer.Ed25519, name)
		switch {
		case err == nil:
			won[name] = fmt.Sprintf("%x", info.Public)
		case !errors.Is(err, signer.ErrKeyExists):
			t.Errorf("%s: GenerateKey(%s): %v", who, name, err)
		}
		// Whichever passphrase "shared" has now, change it to the other.
		old := "p0"
		if _, err := s.with(secretOf(old), PerSign).OpenKey(ctx, signer.KeyRef{Label: "shared"}); err != nil {
			old = "p1"
		}
		next := "p" + strconv.Itoa(1-int(old[1]-'0'))
		err = s.with(secretOf(old), UnlockOnce).ChangePassphrase(ctx, "shared", secretOf(next))
		if err != nil && !errors.Is(err, signer.ErrWrongPassphrase) { // the other changed it first
			t.Errorf("%s: ChangePassphrase: %v", who, err)
		}
	}
	return won
}

func openAny(ctx context.Context, s *Store, name string) (signer.Signer, error) {
	if sg, err := s.with(secretOf("p0"), UnlockOnce).OpenKey(ctx, signer.KeyRef{Label: name}); err == nil {
		return sg, nil
	}
	return s.with(secretOf("p1"), UnlockOnce).OpenKey(ctx, signer.KeyRef{Label: name})
}

// A store locked by another process: writers here wait for it, within
// their deadline, and go ahead once it is released.
func TestStoreLockedByAnotherProcess(t *testing.T) {
	if !crossProcessLock {
		t.Skip("no lock file on this system")
	}
	s := testStore(t)
	if _, err := s.GenerateKey(context.Background(), signer.Ed25519, "old"); err != nil {
		t.Fatal(err)
	}
	cmd := writerProcess(s, "KEYBASE_TEST_WRITER_HOLD=1")
	release, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer release.Close()
	buf := make([]byte, len("LOCKED\n"))
	if _, err := io.ReadFull(stdout, buf); err != nil || string(buf) != "LOCKED\n" {
		t.Fatalf("helper: %q, %v", buf, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if _, err := s.GenerateKey(ctx, signer.Ed25519, "k"); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("GenerateKey while another process holds the lock: got %v", err)
	}
	if err := s.DeleteKey(ctx, signer.KeyRef{Label: "old"}); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("DeleteKey while another process holds the lock: got %v", err)
	}
	release.Close()
	if _, err := s.GenerateKey(context.Background(), signer.Ed25519, "k"); err != nil {
		t.Errorf("GenerateKey after the other process let go: %v", err)
	}
	if err := s.DeleteKey(context.Background(), signer.KeyRef{Label: "old"}); err != nil {
		t.Errorf("DeleteKey after the other process let go: %v", err)
	}
}

// writerProcess is this test binary run as TestHelperWriter on s's
// directory, with env added to its environment.
func writerProcess(s *Store, env ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperWriter$", "-test.count=1")
	cmd.Env = append(append(os.Environ(), "KEYBASE_TEST_WRITER_DIR="+s.Dir()), env...)
	return cmd
}

// TestHelperWriter is the second process of TestStoreTwoProcesses and
// TestStoreLockedByAnotherProcess; it does nothing unless they start it.
func TestHelperWriter(t *testing.T) {
	dir := os.Getenv("KEYBASE_TEST_WRITER_DIR")
	if dir == "" {
		t.Skip("run by TestStoreTwoProcesses")
	}
	s, err := OpenStore(context.Background(), Config{Dir: dir, Secret: pw, Cost: testCost})
	if err != nil {
		t.Fatal(err)
	}
	if os.Getenv("KEYBASE_TEST_WRITER_HOLD") != "" {
		unlock, err := s.lock(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		fmt.Println("LOCKED")
		io.Copy(io.Discard, os.Stdin) // until the parent closes it
		unlock()
		return
	}
	fmt.Println("READY")
	won := raceWriter(t, s, "child")
	b, _ := json.Marshal(won)
	fmt.Printf("WON %s\n", b)
}
