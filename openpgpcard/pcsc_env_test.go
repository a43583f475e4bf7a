//go:build cgo && linux

package openpgpcard_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/signerkit/signerkit/internal/flock"
	"github.com/signerkit/signerkit/openpgpcard"
	"github.com/signerkit/signerkit/openpgpcard/cardsim"
)

// requireEnv, set to 1 (as .ci/run does), turns a missing pcscd or vpcd
// driver from a skip into a failure.
const requireEnv = "SIGNERKIT_REQUIRE_PCSC"

const vpcdDriver = "/usr/lib/pcsc/drivers/serial/libifdvpcd.so"

// need skips the test when tool is missing, or fails it under requireEnv.
func need(t testing.TB, what string, ok bool) {
	t.Helper()
	if ok {
		return
	}
	msg := fmt.Sprintf("%s is missing (make deps installs pcscd, vsmartcard-vpcd, scdaemon, opensc and yubikey-manager)", what)
	if os.Getenv(requireEnv) == "1" {
		t.Fatal(msg + "; " + requireEnv + "=1 requires it")
	}
	t.Skip(msg)
}

func lookPath(name string) bool {
	_, err := exec.LookPath(name)
	return err == nil
}

// reader is a pcscd with vpcd's driver on a free port, and a simulated card
// in its reader.
type reader struct {
	card *cardsim.Card
	name string // the PC/SC reader name
}

// startReader starts pcscd with a reader.conf.d of its own, whose one
// reader is vpcd on a free port, and puts card in it. pcscd listens on
// its one socket, /run/pcscd/pcscd.comm, so one runs at a time on a
// machine: a lock file serializes the test binaries that start one. Where
// the system's pcscd already listens there (systemd starts it on demand
// once the package is installed), the card goes in the system's vpcd
// reader instead, on the port /etc/reader.conf.d/vpcd names.
func startReader(t testing.TB, card *cardsim.Card) *reader {
	t.Helper()
	need(t, "pcscd", lookPath("pcscd"))
	_, err := os.Stat(vpcdDriver)
	need(t, "vpcd's driver "+vpcdDriver+" (vsmartcard-vpcd)", err == nil)
	lockPCSC(t)
	if conn, err := net.Dial("unix", "/run/pcscd/pcscd.comm"); err == nil {
		conn.Close()
		port, ok := systemVPCDPort()
		need(t, "vpcd in the running pcscd's /etc/reader.conf.d/vpcd", ok)
		return insert(t, card, port)
	}
	port := freePort(t)
	dir := t.TempDir()
	conf := fmt.Sprintf("FRIENDLYNAME \"Virtual PCD\"\nDEVICENAME /dev/null:%d\nLIBPATH %s\nCHANNELID %d\n", port, vpcdDriver, port)
	if err := os.WriteFile(filepath.Join(dir, "vpcd"), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	args := []string{"--foreground", "--config", dir, "--apdu"}
	if _, bench := t.(*testing.B); bench {
		args = args[:3] // no APDU log: benchmarks measure pcscd, not its logging
	}
	cmd := exec.Command("pcscd", args...)
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			t.Logf("pcscd's log:\n%s", tail(log.String(), 4000))
		}
	})
	return insert(t, card, port)
}

// insert connects card to vpcd on port, and again whenever the
// connection ends (a card pulled by FaultRemove), until the test ends; it
// waits for PC/SC to show the card.
func insert(t testing.TB, card *cardsim.Card, port int) *reader {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan struct{})
	go func() {
		defer close(served)
		for ctx.Err() == nil {
			card.DialVPCD(ctx, fmt.Sprintf("127.0.0.1:%d", port), 50*time.Millisecond, nil)
			select {
			case <-ctx.Done():
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()
	t.Cleanup(func() { cancel(); <-served })
	r := &reader{card: card, name: "Virtual PCD 00 00"}
	r.waitCard(t)
	return r
}

// systemVPCDPort reads the port of the system's vpcd reader from
// /etc/reader.conf.d/vpcd (DEVICENAME /dev/null:PORT).
func systemVPCDPort() (int, bool) {
	b, err := os.ReadFile("/etc/reader.conf.d/vpcd")
	if err != nil {
		return 0, false
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) == 2 && f[0] == "DEVICENAME" {
			_, port, ok := strings.Cut(f[1], ":")
			n, err := strconv.ParseInt(port, 0, 32)
			return int(n), ok && err == nil && n > 0
		}
	}
	return 0, false
}

// waitCard waits, for at most 20 s, until the card answers SELECT through
// PC/SC.
func (r *reader) waitCard(t testing.TB) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	sel := append([]byte{0x00, 0xA4, 0x04, 0x00, byte(len(cardsim.AID))}, cardsim.AID...)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		tr, err := openpgpcard.PCSCDialer(r.name)(ctx)
		if err == nil {
			var resp []byte
			resp, err = tr.Exchange(ctx, sel)
			tr.Close()
			if err == nil && !bytes.HasSuffix(resp, []byte{0x90, 0x00}) {
				err = fmt.Errorf("SELECT answered %x", resp)
			}
		}
		cancel()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the simulated card did not show in PC/SC: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// lockPCSC takes the machine-wide lock on starting pcscd, waiting for at
// most five minutes.
func lockPCSC(t testing.TB) {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(os.TempDir(), "signerkit-pcscd.lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Minute)
	for {
		err := flock.TryLock(f)
		if err == nil {
			break
		}
		if !errors.Is(err, flock.ErrLocked) || time.Now().After(deadline) {
			f.Close()
			t.Fatalf("locking pcscd: %v", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Cleanup(func() { flock.Unlock(f); f.Close() })
}

func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}
