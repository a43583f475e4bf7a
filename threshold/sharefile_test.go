package threshold_test

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/threshold"
	"github.com/signerkit/signerkit/threshold/frost"
)

// signWith signs msg with the given key packages (FROST's two rounds in
// process) and returns the aggregate signature.
func signWith(t *testing.T, pub *frost.PublicKeyPackage, keys []*frost.KeyPackage, msg []byte) []byte {
	t.Helper()
	var nonces []*frost.SigningNonces
	var list []frost.SigningCommitments
	for _, k := range keys {
		n, err := frost.Commit(k, rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		nonces = append(nonces, n)
		list = append(list, n.Commitments())
	}
	var shares []frost.SignatureShare
	for i, k := range keys {
		s, err := frost.Sign(k, nonces[i], msg, list)
		if err != nil {
			t.Fatal(err)
		}
		shares = append(shares, s)
	}
	sig, err := frost.Aggregate(pub, msg, list, shares)
	if err != nil {
		t.Fatal(err)
	}
	return sig
}

// TestShareFiles: a validator key split and written to share files reads
// back; the group key is the validator's, and every pair of shares signs
// for it (crypto/ed25519 verifies). A share under another key's public
// package, or a damaged file, is a typed error.
func TestShareFiles(t *testing.T) {
	vpub, vpriv, _ := ed25519.GenerateKey(rand.Reader)
	d, err := frost.SplitSeed(vpriv.Seed(), 2, 3, rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	paths, err := threshold.WriteShareFiles(dir, d.Shares, d.Public)
	if err != nil || len(paths) != 4 {
		t.Fatalf("%v, %v", paths, err)
	}
	for _, p := range paths {
		if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != 0o600 {
			t.Fatalf("%s: %v %v", p, fi.Mode(), err)
		}
	}
	if _, err := threshold.WriteShareFiles(dir, d.Shares, d.Public); err == nil {
		t.Fatal("WriteShareFiles overwrote the files")
	}
	pub, err := threshold.LoadPublic(paths[0])
	if err != nil || !bytes.Equal(pub.GroupPublicKey(), vpub) {
		t.Fatalf("public: %v", err)
	}
	var keys []*frost.KeyPackage
	for i, p := range paths[1:] {
		k, kp, err := threshold.LoadShare(p)
		if err != nil || k.ID() != frost.Identifier(i+1) || !bytes.Equal(kp.GroupPublicKey(), vpub) {
			t.Fatalf("%s: %v", p, err)
		}
		keys = append(keys, k)
	}
	for _, pair := range [][2]int{{0, 1}, {0, 2}, {1, 2}} {
		msg := []byte{byte(pair[0]), byte(pair[1])}
		sig := signWith(t, pub, []*frost.KeyPackage{keys[pair[0]], keys[pair[1]]}, msg)
		if !ed25519.Verify(vpub, msg, sig) {
			t.Fatalf("shares %v: the signature does not verify under the validator's key", pair)
		}
	}
	if _, _, err := threshold.LoadShare(paths[0]); !errors.Is(err, signer.ErrCorrupt) {
		t.Fatalf("a public key file as a share: %v", err)
	}
	other, _ := frost.SplitSeed(make([]byte, 32), 2, 3, rand.Reader)
	if _, err := threshold.MarshalShare(keys[0], other.Public); !errors.Is(err, signer.ErrInvalidKey) {
		t.Fatalf("a share with another key's public package: %v", err)
	}
	share, _ := os.ReadFile(paths[1])
	mixed := append(bytes.Clone(share[:bytes.Index(share, []byte("-----BEGIN SIGNERKIT FROST PUBLIC"))]), threshold.MarshalPublic(other.Public)...)
	if _, _, err := threshold.ParseShare(mixed); !errors.Is(err, signer.ErrInvalidKey) {
		t.Fatalf("a share file with another key's public package: %v", err)
	}
	damaged := bytes.Clone(share)
	damaged[bytes.Index(damaged, []byte("\n\n"))+10] ^= 1 // in the key package's base64
	var sfe *threshold.ShareFileError
	if _, _, err := threshold.ParseShare(damaged); !errors.As(err, &sfe) {
		t.Fatalf("a damaged share file: %v", err)
	}
	if _, _, err := threshold.LoadShare(filepath.Join(dir, "none")); !errors.Is(err, signer.ErrKeyNotFound) {
		t.Fatalf("a missing share file: %v", err)
	}
}

// TestExportShare: an exported share imports under its passphrase only;
// a wrong passphrase is ErrWrongPassphrase, a damaged header ErrCorrupt.
func TestExportShare(t *testing.T) {
	d, _ := frost.SplitSeed(bytes.Repeat([]byte{7}, 32), 2, 3, rand.Reader)
	share, err := threshold.MarshalShare(d.Shares[1], d.Public)
	if err != nil {
		t.Fatal(err)
	}
	enc, err := threshold.ExportShare(share, []byte("correct horse"), 10)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(enc, share[60:100]) {
		t.Fatal("the export holds the share in the clear")
	}
	got, err := threshold.ImportShare(enc, []byte("correct horse"))
	if err != nil || !bytes.Equal(got, share) {
		t.Fatalf("import: %v", err)
	}
	if _, err := threshold.ImportShare(enc, []byte("correct horsf")); !errors.Is(err, signer.ErrWrongPassphrase) {
		t.Fatalf("a wrong passphrase: %v", err)
	}
	if _, err := threshold.ImportShare(share, []byte("correct horse")); !errors.Is(err, signer.ErrCorrupt) {
		t.Fatalf("a plain share file: %v", err)
	}
	if _, err := threshold.ExportShare([]byte("junk"), []byte("p"), 10); !errors.Is(err, signer.ErrCorrupt) {
		t.Fatalf("exporting junk: %v", err)
	}
	if _, err := threshold.ExportShare(share, nil, 10); !errors.Is(err, signer.ErrInvalidArgument) {
		t.Fatalf("an empty passphrase: %v", err)
	}
}

// FuzzParseShare: no input panics a share, public key or export parser;
// what parses writes back the same.
func FuzzParseShare(f *testing.F) {
	d, _ := frost.SplitSeed(bytes.Repeat([]byte{9}, 32), 2, 3, rand.Reader)
	share, _ := threshold.MarshalShare(d.Shares[0], d.Public)
	enc, _ := threshold.ExportShare(share, []byte("p"), 10)
	f.Add(share)
	f.Add(threshold.MarshalPublic(d.Public))
	f.Add(enc)
	f.Add([]byte("-----BEGIN SIGNERKIT FROST SHARE-----\n-----END SIGNERKIT FROST SHARE-----\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if k, pub, err := threshold.ParseShare(b); err == nil {
			again, err := threshold.MarshalShare(k, pub)
			if err != nil {
				t.Fatal(err)
			}
			if k2, _, err := threshold.ParseShare(again); err != nil || k2.ID() != k.ID() {
				t.Fatalf("a parsed share does not parse again: %v", err)
			}
		}
		if pub, err := threshold.ParsePublic(b); err == nil {
			if _, err := threshold.ParsePublic(threshold.MarshalPublic(pub)); err != nil {
				t.Fatal(err)
			}
		}
		if len(b) < 4096 {
			if _, err := threshold.ImportShare(b, []byte("p")); err == nil && !bytes.Equal(b, enc) {
				t.Log("imported a fuzzed export") // possible only for a real export
			}
		}
	})
}
