package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/signerkit/signerkit/internal/refsecp256k1"
	"github.com/signerkit/signerkit/keybase"
	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/threshold"
)

// thrDKLSDKG runs the three participants of `signerkit threshold dkg
// -scheme dkls23-secp256k1` (in process, at once) with the certificates
// in dir/certs, participant id with ceremonies[id], writing into dir/p<id>,
// and returns each one's output and error.
func thrDKLSDKG(t *testing.T, dir string, ceremonies [3]string) ([3]string, [3]error) {
	t.Helper()
	addrs := thrFreeAddrs(t, 3)
	c := filepath.Join(dir, "certs")
	type result struct {
		id  int
		out string
		err error
	}
	done := make(chan result, 3)
	for id := 1; id <= 3; id++ {
		var peers []string
		for j := 1; j <= 3; j++ {
			if j != id {
				peers = append(peers, fmt.Sprintf("%d=%s", j, addrs[j-1]))
			}
		}
		args := []string{"threshold", "dkg", "-scheme", threshold.SchemeDKLS23, "-id", fmt.Sprint(id), "-ceremony", ceremonies[id-1],
			"-listen", addrs[id-1], "-peers", strings.Join(peers, ","),
			"-cert", filepath.Join(c, fmt.Sprintf("party-%d.crt", id)), "-key", filepath.Join(c, fmt.Sprintf("party-%d.key", id)), "-ca", filepath.Join(c, "ca.crt"),
			"-out", filepath.Join(dir, fmt.Sprintf("p%d", id)), "-timeout", "20s"}
		go func() {
			var out bytes.Buffer
			err := run(args, &out, &out)
			done <- result{id, out.String(), err}
		}()
	}
	var outs [3]string
	var errs [3]error
	for range 3 {
		r := <-done
		outs[r.id-1], errs[r.id-1] = r.out, r.err
	}
	return outs, errs
}

// TestThresholdDKGDKLS23: three `signerkit threshold dkg -scheme
// dkls23-secp256k1` participants make a 2-of-3 secp256k1 key; each prints
// the same gno address, keybase's address of the key in its share file;
// the share files load as a party's and a coordinator's config files name
// them, and the coordinator (share 1) signs with each party (decred and
// refsecp256k1 verify). A participant of another ceremony fails them all;
// -t 3 is refused, as split refuses it.
func TestThresholdDKGDKLS23(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	thrRunOK(t, "threshold", "certs", "-out", filepath.Join(dir, "certs"))
	outs, errs := thrDKLSDKG(t, dir, [3]string{"dkls ceremony 1", "dkls ceremony 1", "dkls ceremony 1"})
	t.Logf("participant 1:\n%s", outs[0])
	var addr string
	for i, err := range errs {
		if err != nil {
			t.Fatalf("participant %d: %v\n%s", i+1, err, outs[i])
		}
		m := regexp.MustCompile(`gno address: +(g1[0-9a-z]+)`).FindStringSubmatch(outs[i])
		if m == nil || !strings.Contains(outs[i], "gno public key:      gpub") {
			t.Fatalf("participant %d prints no gno address and gpub:\n%s", i+1, outs[i])
		}
		if addr != "" && m[1] != addr {
			t.Fatalf("participant %d prints %s, participant 1 %s", i+1, m[1], addr)
		}
		addr = m[1]
		s, err := threshold.LoadDKLS23Share(filepath.Join(dir, fmt.Sprintf("p%d", i+1), fmt.Sprintf("share-%d.pem", i+1)))
		if err != nil {
			t.Fatal(err)
		}
		pub, err := signer.ParseSecp256k1PublicKey(s.PublicKey())
		if err != nil {
			t.Fatal(err)
		}
		if a, err := keybase.Address(pub); err != nil || a != addr || s.ID != i+1 || s.T != 2 || s.N != 3 {
			t.Fatalf("share %d (%d, %d of %d) has address %s (%v), the command printed %s", i+1, s.ID, s.T, s.N, a, err, addr)
		}
	}
	thrDKLSSignWithFiles(t, dir)

	second := filepath.Join(dir, "second")
	if err := os.MkdirAll(second, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "certs"), filepath.Join(second, "certs")); err != nil {
		t.Fatal(err)
	}
	outs, errs = thrDKLSDKG(t, second, [3]string{"dkls ceremony 2", "dkls ceremony 2", "another ceremony"})
	for i, err := range errs {
		t.Logf("participant %d of the mixed ceremonies: %v", i+1, err)
		if err == nil || !strings.Contains(err.Error(), "protocol aborted by party") {
			t.Errorf("participant %d with a participant of another ceremony: %v\n%s", i+1, err, outs[i])
		}
	}
	code, _, _ := runIn("threshold", "dkg", "-scheme", threshold.SchemeDKLS23, "-t", "3", "-id", "1", "-ceremony", "c", "-listen", "127.0.0.1:0",
		"-peers", "2=127.0.0.1:1,3=127.0.0.1:2", "-cert", "x", "-key", "x", "-ca", "x", "-out", filepath.Join(dir, "t3"))
	if code != 1 {
		t.Errorf("dkg -scheme dkls23-secp256k1 -t 3: exit %d, want 1", code)
	}
	if code, _, _ := runIn("threshold", "dkg", "-scheme", "rsa", "-id", "1", "-ceremony", "c", "-listen", "127.0.0.1:0",
		"-peers", "2=127.0.0.1:1", "-cert", "x", "-key", "x", "-ca", "x", "-out", filepath.Join(dir, "rsa")); code != 2 {
		t.Errorf("dkg -scheme rsa: exit %d, want 2", code)
	}
}

// thrDKLSSignWithFiles loads the DKG's shares 2 and 3 through party
// config files and serves them, and signs through coordinator config
// files naming share 1 and one of them.
func thrDKLSSignWithFiles(t *testing.T, dir string) {
	t.Helper()
	c := filepath.Join(dir, "certs")
	for id := 2; id <= 3; id++ {
		path := filepath.Join(dir, fmt.Sprintf("party-%d.toml", id))
		thrWrite(t, path, fmt.Sprintf("scheme = %q\nshare = %q\nlisten = \"127.0.0.1:0\"\ncert = %q\nkey = %q\nca = %q\ncoordinators = [\"coordinator-1\"]\n",
			threshold.SchemeDKLS23, filepath.Join(dir, fmt.Sprintf("p%d", id), fmt.Sprintf("share-%d.pem", id)),
			filepath.Join(c, fmt.Sprintf("party-%d.crt", id)), filepath.Join(c, fmt.Sprintf("party-%d.key", id)), filepath.Join(c, "ca.crt")))
		setup, err := threshold.LoadDKLS23PartyFile(path)
		if err != nil {
			t.Fatal(err)
		}
		l, err := net.Listen("tcp", setup.File.Listen)
		if err != nil {
			t.Fatal(err)
		}
		p, err := threshold.NewDKLS23Party(setup.Config)
		if err != nil {
			l.Close()
			t.Fatal(err)
		}
		t.Cleanup(func() { p.Close() })
		go p.Serve(l)
		coord := filepath.Join(dir, fmt.Sprintf("coordinator-with-%d.toml", id))
		thrWrite(t, coord, fmt.Sprintf("scheme = %q\nshare = %q\ncert = %q\nkey = %q\nca = %q\npool_size = -1\n[[party]]\nid = %d\naddr = %q\n",
			threshold.SchemeDKLS23, filepath.Join(dir, "p1", "share-1.pem"),
			filepath.Join(c, "coordinator-1.crt"), filepath.Join(c, "coordinator-1.key"), filepath.Join(c, "ca.crt"), id, l.Addr().String()))
		s, err := threshold.OpenDKLS23File(coord)
		if err != nil {
			t.Fatal(err)
		}
		msg := fmt.Appendf(nil, "gno sign bytes, shares 1 and %d of a networked DKG", id)
		sig, err := s.SignContext(context.Background(), msg)
		s.Close()
		if err != nil {
			t.Fatal(err)
		}
		thrCheckSecp256k1(t, s.PublicKey(), msg, sig)
	}
}

func thrWrite(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
}

// thrCheckSecp256k1 verifies a 64-byte low-S r‖s over SHA-256(msg) with
// signer's verifier (decred's secp256k1) and with internal/refsecp256k1.
func thrCheckSecp256k1(t *testing.T, pub, msg, sig []byte) {
	t.Helper()
	k, err := signer.ParseSecp256k1PublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	if err := signer.ECDSASecp256k1.Verify(k, msg, sig); err != nil {
		t.Fatal(err)
	}
	h := sha256.Sum256(msg)
	if len(sig) != 64 || !refsecp256k1.VerifyLowS(pub, h[:], sig[:32], sig[32:]) {
		t.Fatal("refsecp256k1 refuses the signature")
	}
}
