package gnokeyhome_test

import (
	"context"
	"crypto"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/syndtr/goleveldb/leveldb"

	"github.com/signerkit/signerkit/keybase"
	"github.com/signerkit/signerkit/keybase/gnokeyhome"
	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/signer/signertest"
)

// testdata/gnokey-home was written by gno v1.7.1's own keybase
// (keys.NewKeyBaseFromDir): interop/keybase_gnokeyhome_test.go,
// TestGnokeyHome, run with SIGNERKIT_WRITE_GNOKEYHOME set to the
// directory. Its local keys are encrypted under fixturePass, but "plain",
// which gnokey stored unencrypted (empty passphrase).
const fixturePass = "fixture passphrase"

// fixtureKeys is what `gnokey list` shows of the fixture (names, kinds,
// addresses and the Ledger key's path, as gno computed them).
var fixtureKeys = []struct {
	name    string
	kind    gnokeyhome.Kind
	alg     signer.Algorithm
	address string
	path    string
}{
	{"g1jg8mtutu9khhfwc4nxmuhcpftf0pajdhfvsqf5", gnokeyhome.Local, signer.Ed25519, "g1gma4ha9xs48t4c280ss5eq8lxzxx60jsqu7gzn", ""},
	{"ledger", gnokeyhome.Ledger, signer.ECDSASecp256k1, "g18rlft0nwd3p42hp5rf76fxwynx6cqqkyr9u9fr", "44'/118'/3'/0/1"},
	{"multi 2-of-3", gnokeyhome.Multi, 0, "g1ktv59sygaqxsjy68h9nvf834jfzyf5y05vszx8", ""},
	{"my key/ed25519 ✓", gnokeyhome.Local, signer.Ed25519, "g1xqhrd7pxw60fll0dqnf0sdfcz7ywve26psq4jv", ""},
	{"offline", gnokeyhome.Offline, signer.ECDSASecp256k1, "g1gxl0e8utkwmvrr9ux55dk6cl5xhtkvelarx5t2", ""},
	{"plain", gnokeyhome.Local, signer.ECDSASecp256k1, "g1zekdj9fdz783xul69f7apj68chua0crtp4vxer", ""},
	{"validator", gnokeyhome.Local, signer.ECDSASecp256k1, "g19rl4cm2hmr8afy4kldpxz3fka4jguq0a0u3773", ""},
}

// fixtureHome copies the fixture into a temporary gnokey home, so that
// tests can lock it and nothing is written to testdata.
func fixtureHome(t testing.TB) string {
	t.Helper()
	home := t.TempDir()
	src := filepath.Join("testdata", "gnokey-home", "data", "keys.db")
	dst := filepath.Join(home, "data", "keys.db")
	if err := os.MkdirAll(dst, 0o700); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		in, err := os.Open(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out, err := os.Create(filepath.Join(dst, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(out, in); err != nil {
			t.Fatal(err)
		}
		in.Close()
		out.Close()
	}
	return home
}

func pass(name string) signer.Secret {
	if name == "plain" {
		return signer.SecretBytes(nil)
	}
	return signer.SecretBytes([]byte(fixturePass))
}

func TestFixtureKeys(t *testing.T) {
	ctx := context.Background()
	home := fixtureHome(t)
	st, err := gnokeyhome.OpenStore(ctx, gnokeyhome.Config{Home: home})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	keys, err := st.Keys(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != len(fixtureKeys) {
		t.Fatalf("Keys: %d keys, want %d: %v", len(keys), len(fixtureKeys), keys)
	}
	var local []string
	for i, k := range keys {
		w := fixtureKeys[i]
		if k.Name != w.name || k.Kind != w.kind || k.Algorithm != w.alg || k.Address != w.address || k.Path != w.path {
			t.Errorf("key %d: %q %v %v %s %q, want %q %v %v %s %q", i, k.Name, k.Kind, k.Algorithm, k.Address, k.Path, w.name, w.kind, w.alg, w.address, w.path)
		}
		if k.Kind == gnokeyhome.Local {
			local = append(local, k.Name)
		}
		if k.Kind != gnokeyhome.Multi {
			if a, err := keybase.Address(k.Public); err != nil || a != k.Address {
				t.Errorf("%q: keybase.Address = %s, %v; KeyInfo says %s", k.Name, a, err, k.Address)
			}
		}
	}
	m, ok := keys[2].Public.(*gnokeyhome.Multisig)
	if !ok || m.Threshold != 2 || len(m.Keys) != 3 {
		t.Errorf("multisig key: %#v", keys[2].Public)
	} else if !equalKey(m.Keys[0], keys[6].Public) || !equalKey(m.Keys[1], keys[3].Public) || !equalKey(m.Keys[2], keys[4].Public) {
		t.Error("multisig members are not validator, my key/ed25519 ✓ and offline")
	}

	list, err := st.ListKeys(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var labels []string
	for _, k := range list {
		labels = append(labels, k.Label)
	}
	if !slices.Equal(labels, local) {
		t.Errorf("ListKeys: %q, want the local keys %q", labels, local)
	}

	for _, k := range keys {
		got, err := st.KeyInfo(ctx, k.Address)
		if err != nil || got.Name != k.Name {
			t.Errorf("KeyInfo(%s) = %q, %v; want %q", k.Address, got.Name, err, k.Name)
		}
	}
}

// TestFixtureSign opens every local key of the fixture by name, and two
// by address, and checks each signature with the standard library. Under
// the race detector it opens the unencrypted key only. Each open of an
// encrypted key is a bcrypt at gnokey's cost (12), so the opens run in
// parallel subtests, reading the one fixture home together.
func TestFixtureSign(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	home := fixtureHome(t)
	msg := []byte("a tm2 transaction's sign bytes")
	for _, w := range fixtureKeys {
		if w.kind != gnokeyhome.Local || raceEnabled && w.name != "plain" {
			continue
		}
		labels := []string{w.name}
		if w.name == "plain" || w.name == "g1jg8mtutu9khhfwc4nxmuhcpftf0pajdhfvsqf5" {
			labels = append(labels, w.address)
		}
		for _, label := range labels {
			t.Run(label, func(t *testing.T) {
				t.Parallel()
				sg, err := gnokeyhome.Open(ctx, gnokeyhome.Config{Home: home, Secret: pass(w.name), Key: signer.KeyRef{Label: label}})
				if err != nil {
					t.Fatalf("Open(%q): %v", label, err)
				}
				sig, err := sg.SignContext(ctx, msg)
				if err != nil {
					t.Errorf("%q: %v", label, err)
				} else if err := signertest.VerifyStd(sg.Algorithm(), sg.Public(), msg, sig); err != nil {
					t.Errorf("%q: %v", label, err)
				}
				if a, _ := keybase.Address(sg.Public()); a != w.address {
					t.Errorf("%q: opened the key of %s, want %s", label, a, w.address)
				}
				sg.Close()
			})
		}
	}
}

func TestFixtureErrors(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	home := fixtureHome(t)
	st, err := gnokeyhome.OpenStore(ctx, gnokeyhome.Config{Home: home, Secret: signer.SecretBytes([]byte("not it"))})
	if err != nil {
		t.Fatal(err)
	}
	_, err = st.OpenKey(ctx, signer.KeyRef{Label: "my key/ed25519 ✓"})
	var pe *keybase.PassphraseError
	if !errors.As(err, &pe) || pe.Label != "my key/ed25519 ✓" || !errors.Is(err, signer.ErrWrongPassphrase) {
		t.Errorf("wrong passphrase: %v", err)
	}
	_, err = st.OpenKey(ctx, signer.KeyRef{Label: "plain"})
	if !errors.As(err, &pe) || !pe.Unencrypted {
		t.Errorf("unencrypted key, a passphrase given: %v", err)
	}
	for _, name := range []string{"ledger", "offline", "multi 2-of-3", "g18rlft0nwd3p42hp5rf76fxwynx6cqqkyr9u9fr"} {
		var ke *gnokeyhome.KindError
		if _, err := st.OpenKey(ctx, signer.KeyRef{Label: name}); !errors.As(err, &ke) || !errors.Is(err, signer.ErrUnsupported) {
			t.Errorf("OpenKey(%q): %v, want a *KindError", name, err)
		}
		if _, err := st.ExportArmor(ctx, name); !errors.Is(err, signer.ErrUnsupported) {
			t.Errorf("ExportArmor(%q): %v", name, err)
		}
	}
	for _, ref := range []signer.KeyRef{{Label: "nobody"}, {Label: "g1qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqluuxe"}, {Label: "validator", ID: "1"}} {
		if _, err := st.OpenKey(ctx, ref); !errors.Is(err, signer.ErrKeyNotFound) {
			t.Errorf("OpenKey(%v): %v, want ErrKeyNotFound", ref, err)
		}
	}
	if _, err := st.OpenKey(ctx, signer.KeyRef{Label: "validator", Algorithm: signer.Ed25519}); !errors.Is(err, signer.ErrInvalidArgument) {
		t.Errorf("OpenKey of the wrong algorithm: %v", err)
	}
	if _, err := st.OpenKey(ctx, signer.KeyRef{}); !errors.Is(err, signer.ErrInvalidArgument) {
		t.Errorf("OpenKey with no label: %v", err)
	}

	// ExportArmor needs no passphrase; the armor decrypts under the key's.
	armor, err := st.ExportArmor(ctx, "validator")
	if err != nil {
		t.Fatal(err)
	}
	if !raceEnabled {
		if _, err := keybase.DecryptArmor(ctx, armor, []byte(fixturePass)); err != nil {
			t.Errorf("DecryptArmor of the exported key: %v", err)
		}
	}

	st.Close()
	if _, err := st.Keys(ctx); !errors.Is(err, signer.ErrClosed) {
		t.Errorf("Keys after Close: %v", err)
	}
}

func TestHomes(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	if _, err := gnokeyhome.OpenStore(ctx, gnokeyhome.Config{Home: filepath.Join(dir, "missing")}); !errors.Is(err, fs.ErrNotExist) || !errors.Is(err, signer.ErrInvalidArgument) {
		t.Errorf("missing home: %v", err)
	}
	file := filepath.Join(dir, "file")
	os.WriteFile(file, nil, 0o600)
	if _, err := gnokeyhome.OpenStore(ctx, gnokeyhome.Config{Home: file}); !errors.Is(err, signer.ErrInvalidArgument) {
		t.Errorf("a file as home: %v", err)
	}
	if _, err := gnokeyhome.OpenStore(ctx, gnokeyhome.Config{Home: dir, LockWait: -1}); !errors.Is(err, signer.ErrInvalidArgument) {
		t.Errorf("negative LockWait: %v", err)
	}
	if _, err := gnokeyhome.OpenStore(ctx, gnokeyhome.Config{Home: dir, Mode: 7}); !errors.Is(err, signer.ErrInvalidArgument) {
		t.Errorf("unknown mode: %v", err)
	}
	// A home gnokey has not used yet: no keys, and nothing created.
	st, err := gnokeyhome.OpenStore(ctx, gnokeyhome.Config{Home: dir})
	if err != nil {
		t.Fatal(err)
	}
	if keys, err := st.Keys(ctx); err != nil || len(keys) != 0 {
		t.Errorf("Keys of an empty home: %v, %v", keys, err)
	}
	if _, err := st.OpenKey(ctx, signer.KeyRef{Label: "validator"}); !errors.Is(err, signer.ErrKeyNotFound) {
		t.Errorf("OpenKey in an empty home: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "data")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("reading an empty home created %s/data", dir)
	}
	// $GNOHOME is gnokey's default home.
	t.Setenv("GNOHOME", fixtureHome(t))
	st, err = gnokeyhome.OpenStore(ctx, gnokeyhome.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if k, err := st.KeyInfo(ctx, "validator"); err != nil || k.Kind != gnokeyhome.Local {
		t.Errorf("KeyInfo in $GNOHOME: %v, %v", k, err)
	}
}

// TestReadOnly: reading writes nothing to the database: no file appears
// (LOCK included), changes or goes, whether the database has a LOCK
// file (a home gnokey has used) or not (a copied or backed-up one).
func TestReadOnly(t *testing.T) {
	for _, withLock := range []bool{false, true} {
		t.Run(fmt.Sprintf("LOCK=%v", withLock), func(t *testing.T) {
			home := fixtureHome(t)
			db := filepath.Join(home, "data", "keys.db")
			if withLock { // as gnokey leaves it
				if err := os.WriteFile(filepath.Join(db, "LOCK"), nil, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			before := snapshot(t, db)
			readAll(t, home)
			compare(t, before, snapshot(t, db))
		})
	}
}

// TestReadOnlyInPlace reads the committed fixture where it is: it has no
// LOCK file, and none appears.
func TestReadOnlyInPlace(t *testing.T) {
	home := filepath.Join("testdata", "gnokey-home")
	db := filepath.Join(home, "data", "keys.db")
	before := snapshot(t, db)
	if _, ok := before["LOCK"]; ok {
		t.Fatalf("%s has a LOCK file: remove it (no read here creates one)", db)
	}
	readAll(t, home)
	compare(t, before, snapshot(t, db))
}

// TestReadOnlyDir reads a home whose directories and files cannot be
// written (as on a read-only mount, or a backup owned by someone else).
// Unless the test runs as root, which may write anyway, an attempt to
// create LOCK would fail the read; as root, compare finds the file.
func TestReadOnlyDir(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("directory modes do not stop writes on Windows")
	}
	home := fixtureHome(t)
	db := filepath.Join(home, "data", "keys.db")
	entries, err := os.ReadDir(db)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if err := os.Chmod(filepath.Join(db, e.Name()), 0o444); err != nil {
			t.Fatal(err)
		}
	}
	dirs := []string{db, filepath.Dir(db), home}
	for _, d := range dirs {
		if err := os.Chmod(d, 0o555); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { // so that TempDir can remove it
		for _, d := range dirs {
			os.Chmod(d, 0o755)
		}
	})
	before := snapshot(t, db)
	readAll(t, home)
	compare(t, before, snapshot(t, db))
}

// readAll reads the home every way a Store reads: Open (a key's record),
// Keys (every record), KeyInfo by address (the index), ExportArmor.
func readAll(t *testing.T, home string) {
	t.Helper()
	ctx := context.Background()
	sg, err := gnokeyhome.Open(ctx, gnokeyhome.Config{Home: home, Secret: pass("plain"), Key: signer.KeyRef{Label: "plain"}})
	if err != nil {
		t.Fatal(err)
	}
	sg.Close()
	st, err := gnokeyhome.OpenStore(ctx, gnokeyhome.Config{Home: home})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if keys, err := st.Keys(ctx); err != nil || len(keys) != len(fixtureKeys) {
		t.Fatalf("Keys: %d keys, %v; want %d", len(keys), err, len(fixtureKeys))
	}
	if _, err := st.KeyInfo(ctx, "g19rl4cm2hmr8afy4kldpxz3fka4jguq0a0u3773"); err != nil {
		t.Fatal(err)
	}
	if _, err := st.ExportArmor(ctx, "validator"); err != nil {
		t.Fatal(err)
	}
}

// compare fails t for each file of before that changed or went, and each
// file of after that appeared.
func compare(t *testing.T, before, after map[string]string) {
	t.Helper()
	for name, b := range before {
		if a, ok := after[name]; !ok {
			t.Errorf("%s went", name)
		} else if a != b {
			t.Errorf("%s changed", name)
		}
	}
	for name := range after {
		if _, ok := before[name]; !ok {
			t.Errorf("%s appeared", name)
		}
	}
}

// snapshot returns each file of dir: its mode, size, modification time
// and content; and, as ".", dir's mode and modification time (which a
// file created and removed would change).
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{".": fmt.Sprintf("%v %v", fi.Mode(), fi.ModTime().UnixNano())}
	for _, e := range entries {
		p := filepath.Join(dir, e.Name())
		fi, err := os.Lstat(p)
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = fmt.Sprintf("%v %d %v %q", fi.Mode(), fi.Size(), fi.ModTime().UnixNano(), b)
	}
	return out
}

// TestLocked: while a writer (gnokey) holds the database, a read waits
// until its deadline or LockWait and fails with a *LockedError.
func TestLocked(t *testing.T) {
	home := fixtureHome(t)
	w, err := leveldb.OpenFile(filepath.Join(home, "data", "keys.db"), nil) // as gnokey opens it
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	st, err := gnokeyhome.OpenStore(context.Background(), gnokeyhome.Config{Home: home, LockWait: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	deadline, _ := ctx.Deadline()
	_, err = st.Keys(ctx)
	returned := time.Now()
	cancel()
	var le *gnokeyhome.LockedError
	if !errors.As(err, &le) || !errors.Is(err, signer.ErrBusy) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Keys under a writer's lock: %v, want a *LockedError", err)
	}
	if returned.Before(deadline) {
		t.Errorf("gave up after %v, %v before the deadline", le.Waited, deadline.Sub(returned))
	}

	st, _ = gnokeyhome.OpenStore(context.Background(), gnokeyhome.Config{Home: home, LockWait: 30 * time.Millisecond})
	_, err = st.OpenKey(context.Background(), signer.KeyRef{Label: "validator"})
	if !errors.As(err, &le) || !errors.Is(err, signer.ErrBusy) || le.Err != nil || le.Waited < 30*time.Millisecond {
		t.Fatalf("OpenKey under a writer's lock, LockWait 30ms: %v", err)
	}
}

func TestURI(t *testing.T) {
	for _, c := range []struct {
		uri        string
		home, key  string
		mode       keybase.Mode
		wantSecret bool
	}{
		{"gnokeyhome:home=/h;label=validator", "/h", "validator", keybase.UnlockOnce, false},
		{"gnokeyhome:label=my%20key%2Fed25519%20%E2%9C%93?pin-value=x&mode=per-sign", "", "my key/ed25519 ✓", keybase.PerSign, true},
		{"GNOKEYHOME:label=g1jg8mtutu9khhfwc4nxmuhcpftf0pajdhfvsqf5?pin-source=env:X", "", "g1jg8mtutu9khhfwc4nxmuhcpftf0pajdhfvsqf5", keybase.UnlockOnce, true},
	} {
		cfg, err := gnokeyhome.ParseURI(c.uri)
		if err != nil {
			t.Errorf("%s: %v", c.uri, err)
			continue
		}
		if cfg.Home != c.home || cfg.Key.Label != c.key || cfg.Mode != c.mode || (cfg.Secret != nil) != c.wantSecret {
			t.Errorf("%s: %+v", c.uri, cfg)
		}
	}
	for _, bad := range []string{
		"keybase:dir=/x;label=y",
		"gnokeyhome:home=/h",
		"gnokeyhome:label=",
		"gnokeyhome:home=;label=x",
		"gnokeyhome:label=x;dir=/d",
		"gnokeyhome:label=x?mode=sometimes",
		"gnokeyhome:label=x?pin-value=a&b&mode=x",
	} {
		_, err := gnokeyhome.ParseURI(bad)
		var ue *signer.URIError
		if !errors.As(err, &ue) || !errors.Is(err, signer.ErrInvalidArgument) {
			t.Errorf("%s: %v, want a *signer.URIError", bad, err)
		}
	}
	// Registered: signer.Open opens a key of the fixture by URI.
	home := fixtureHome(t)
	sg, err := signer.Open(context.Background(), "gnokeyhome:home="+home+";label=plain?pin-value=")
	if err != nil {
		t.Fatal(err)
	}
	defer sg.Close()
	msg := []byte("m")
	sig, err := sg.SignContext(context.Background(), msg)
	if err != nil {
		t.Fatal(err)
	}
	if err := signertest.VerifyStd(signer.ECDSASecp256k1, sg.Public(), msg, sig); err != nil {
		t.Error(err)
	}
}

func equalKey(a, b crypto.PublicKey) bool {
	k, ok := a.(interface{ Equal(crypto.PublicKey) bool })
	return ok && k.Equal(b)
}

// BenchmarkKeyInfo measures one read of a gnokey home: the database
// opened read-only (its shared lock taken), a record read by address
// through gnokey's index, the database closed.
func BenchmarkKeyInfo(b *testing.B) {
	ctx := context.Background()
	st, err := gnokeyhome.OpenStore(ctx, gnokeyhome.Config{Home: fixtureHome(b)})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := st.KeyInfo(ctx, "g19rl4cm2hmr8afy4kldpxz3fka4jguq0a0u3773"); err != nil {
			b.Fatal(err)
		}
	}
}

// TestOpenStoreURI: signer.OpenStore opens a gnokey home from a
// gnokeyhome: URI, for keys list, and returns the key the URI names.
func TestOpenStoreURI(t *testing.T) {
	home := fixtureHome(t)
	st, ref, err := signer.OpenStore(context.Background(), "gnokeyhome:home="+home+";label=validator")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if ref.Label != "validator" {
		t.Errorf("ref %v", ref)
	}
	keys, err := st.(signer.KeyLister).ListKeys(context.Background())
	if err != nil || len(keys) == 0 {
		t.Fatalf("ListKeys: %v, %v", keys, err)
	}
	// A store needs no label; a key does.
	st2, ref, err := signer.OpenStore(context.Background(), "gnokeyhome:home="+home)
	if err != nil || ref.Label != "" {
		t.Fatalf("OpenStore without a label: %v, %v", ref, err)
	}
	st2.Close()
	if _, err := gnokeyhome.ParseURI("gnokeyhome:home=" + home); !errors.Is(err, signer.ErrInvalidArgument) {
		t.Errorf("ParseURI without a label: %v", err)
	}
	if _, _, err := signer.OpenStore(context.Background(), "gnokeyhome:home="+home+";label="); !errors.Is(err, signer.ErrInvalidArgument) {
		t.Errorf("OpenStore with an empty label: %v", err)
	}
}
