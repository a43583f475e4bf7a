package inprocess_test

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/signerkit/signerkit/inprocess"
	"github.com/signerkit/signerkit/internal/eckey"
	"github.com/signerkit/signerkit/internal/refsecp256k1"
	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/signer/signertest"
)

const keyfiles = "testdata/keyfiles"

// opensslPublic returns the public keys OpenSSL derived for the test key
// files (testdata/keyfiles/public.txt), as SubjectPublicKeyInfo DER.
func opensslPublic(t *testing.T) map[string][]byte {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(keyfiles, "public.txt"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for line := range strings.Lines(string(raw)) {
		name, h, ok := strings.Cut(strings.TrimSpace(line), " ")
		if !ok {
			t.Fatalf("public.txt: %q", line)
		}
		out[name] = unhex(t, h)
	}
	return out
}

// spkiPublic reads a SubjectPublicKeyInfo with crypto/x509, or for
// secp256k1, which crypto/x509 does not know, takes the uncompressed point
// at its end.
func spkiPublic(t *testing.T, alg signer.Algorithm, spki []byte) crypto.PublicKey {
	t.Helper()
	if alg == signer.ECDSASecp256k1 {
		point := spki[len(spki)-65:]
		if point[0] != 4 {
			t.Fatalf("no uncompressed point at the end of %x", spki)
		}
		return eckey.NewPublic(signer.Secp256k1(), new(big.Int).SetBytes(point[1:33]), new(big.Int).SetBytes(point[33:]))
	}
	pub, err := x509.ParsePKIXPublicKey(spki)
	if err != nil {
		t.Fatal(err)
	}
	return pub
}

func equalPublic(a, b crypto.PublicKey) bool {
	k, ok := a.(interface{ Equal(crypto.PublicKey) bool })
	return ok && k.Equal(b)
}

// Key files OpenSSL wrote open, hold the public key OpenSSL derived, and
// sign what the standard library verifies under it.
func TestKeyFilesFromOpenSSL(t *testing.T) {
	ctx := context.Background()
	pubs := opensslPublic(t)
	cases := []struct {
		file string
		alg  signer.Algorithm // 0: what the file gives, else Key.Algorithm
		want signer.Algorithm
	}{
		{"ed25519-pkcs8.pem", 0, signer.Ed25519},
		{"p256-pkcs8.pem", 0, signer.ECDSAP256},
		{"p384-sec1.pem", 0, signer.ECDSAP384},
		{"secp256k1-sec1.pem", 0, signer.ECDSASecp256k1},
		{"secp256k1-pkcs8.pem", 0, signer.ECDSASecp256k1},
		{"rsa2048-pkcs1.pem", 0, signer.RSAPKCS1v15},
		{"rsa2048-pkcs8.pem", signer.RSAPSS, signer.RSAPSS},
	}
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
			path := filepath.Join(keyfiles, tc.file)
			want := spkiPublic(t, tc.want, pubs[tc.file])
			priv, err := inprocess.LoadKeyFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !equalPublic(priv.(crypto.Signer).Public(), want) {
				t.Fatal("LoadKeyFile gives another public key than OpenSSL")
			}
			k, err := inprocess.Open(ctx, inprocess.Config{File: path, Key: signer.KeyRef{Algorithm: tc.alg}})
			if err != nil {
				t.Fatal(err)
			}
			defer k.Close()
			if k.Algorithm() != tc.want {
				t.Errorf("Algorithm %v, want %v", k.Algorithm(), tc.want)
			}
			msg := []byte("block 1 of " + tc.file)
			sig, err := k.SignContext(ctx, msg)
			if err != nil {
				t.Fatal(err)
			}
			if err := signertest.VerifyStd(tc.want, want, msg, sig); err != nil {
				t.Error(err)
			}
		})
	}
	for file, want := range map[string]error{
		"p521-sec1.pem":         signer.ErrUnsupported,
		"x25519-pkcs8.pem":      signer.ErrUnsupported,
		"ed25519-encrypted.pem": signer.ErrUnsupported,
	} {
		path := filepath.Join(keyfiles, file)
		_, err := inprocess.LoadKeyFile(path)
		if !errors.Is(err, want) || !strings.HasPrefix(err.Error(), "inprocess: key file "+path+": ") {
			t.Errorf("%s: got %v, want %v, naming the file once", file, err, want)
		}
		if _, err := inprocess.Open(ctx, inprocess.Config{File: path}); !errors.Is(err, want) {
			t.Errorf("Open(%s): got %v, want %v", file, err, want)
		}
	}
}

// The priv_validator_key.json files of CometBFT's documentation and gno's
// tests open and sign under the public key they hold.
func TestValidatorKeyFiles(t *testing.T) {
	ctx := context.Background()
	for file, alg := range map[string]signer.Algorithm{
		"cometbft-ed25519.json":   signer.Ed25519,
		"cometbft-secp256k1.json": signer.ECDSASecp256k1,
		"gno-ed25519.json":        signer.Ed25519,
	} {
		t.Run(file, func(t *testing.T) {
			path := filepath.Join(keyfiles, file)
			f := readValidatorFile(t, path)
			var want crypto.PublicKey = ed25519.PublicKey(f.pub)
			if alg == signer.ECDSASecp256k1 {
				x, y, err := refsecp256k1.ParsePublicKey(f.pub)
				if err != nil {
					t.Fatal(err)
				}
				want = eckey.NewPublic(signer.Secp256k1(), x, y)
			}
			k, err := inprocess.Open(ctx, inprocess.Config{File: path})
			if err != nil {
				t.Fatal(err)
			}
			defer k.Close()
			if k.Algorithm() != alg || !equalPublic(k.Public(), want) {
				t.Fatalf("opened a %v key %v, want %v %v", k.Algorithm(), k.Public(), alg, want)
			}
			msg := []byte("prevote")
			sig, err := k.SignContext(ctx, msg)
			if err != nil {
				t.Fatal(err)
			}
			if err := signertest.VerifyStd(alg, want, msg, sig); err != nil {
				t.Error(err)
			}
		})
	}
}

// Key files in a form ParseKeyFile reads, with something wrong, are
// refused with the right sentinel, and the error never quotes the key.
func TestParseKeyFileRefuses(t *testing.T) {
	comet := readValidatorFile(t, filepath.Join(keyfiles, "cometbft-ed25519.json"))
	_, other, _ := ed25519.GenerateKey(rand.Reader)
	ed := must(os.ReadFile(filepath.Join(keyfiles, "ed25519-pkcs8.pem")))
	p256 := must(os.ReadFile(filepath.Join(keyfiles, "p256-pkcs8.pem")))
	k1, err := inprocess.LoadKeyFile(filepath.Join(keyfiles, "secp256k1-sec1.pem"))
	if err != nil {
		t.Fatal(err)
	}
	k1d := eckey.Scalar(k1.(*ecdsa.PrivateKey)).FillBytes(make([]byte, 32))
	k1pub := uncompressed(&k1.(*ecdsa.PrivateKey).PublicKey)
	otherK1 := uncompressed(refPublic(big.NewInt(7)))
	nk1 := refsecp256k1.N().FillBytes(make([]byte, 32))
	mixed := append(append([]byte(nil), comet.priv[:32]...), other[32:]...)

	cases := []struct {
		name string
		data []byte
		want error
	}{
		{"empty", nil, signer.ErrCorrupt},
		{"text", []byte("not a key"), signer.ErrCorrupt},
		{"too large", bytes.Repeat([]byte("\n"), 1<<20), signer.ErrCorrupt},
		{"public key only", pemBlock("PUBLIC KEY", []byte{0x30, 0}), signer.ErrCorrupt},
		{"two private keys", append(append([]byte(nil), ed...), p256...), signer.ErrCorrupt},
		{"truncated PKCS #8", pemBlock("PRIVATE KEY", pemDER(t, ed)[:20]), signer.ErrCorrupt},
		{"garbage PKCS #1", pemBlock("RSA PRIVATE KEY", []byte{0x30, 3, 2, 1, 0}), signer.ErrCorrupt},
		{"encrypted PEM headers", []byte("-----BEGIN EC PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,00\n\nAAAA\n-----END EC PRIVATE KEY-----\n"), signer.ErrUnsupported},
		{"SEC 1 of another public key", sec1(t, 1, k1d, oidSecp256k1, otherK1), signer.ErrInvalidKey},
		{"SEC 1 public key not a point", sec1(t, 1, k1d, oidSecp256k1, []byte{4, 1, 2}), signer.ErrInvalidKey},
		{"SEC 1 scalar zero", sec1(t, 1, make([]byte, 32), oidSecp256k1, nil), signer.ErrInvalidKey},
		{"SEC 1 scalar n", sec1(t, 1, nk1, oidSecp256k1, nil), signer.ErrInvalidKey},
		{"SEC 1 scalar too long", sec1(t, 1, append([]byte{1}, k1d...), oidSecp256k1, nil), signer.ErrInvalidKey},
		{"SEC 1 version 2", sec1(t, 2, k1d, oidSecp256k1, k1pub), signer.ErrCorrupt},
		{"SEC 1 without a curve", sec1(t, 1, k1d, nil, k1pub), signer.ErrCorrupt},
		{"SEC 1 on P-224", sec1(t, 1, k1d[:28], []int{1, 3, 132, 0, 33}, nil), signer.ErrUnsupported},
		{"JSON not an object of keys", []byte(`{"priv_key": 5}`), signer.ErrCorrupt},
		{"JSON truncated", comet.raw[:len(comet.raw)/2], signer.ErrCorrupt},
		{"JSON without pub_key", comet.with(t, "pub_key", nil), signer.ErrCorrupt},
		{"JSON without priv_key", comet.with(t, "priv_key", nil), signer.ErrCorrupt},
		{"JSON bad base64", comet.with(t, "priv_key", map[string]any{"type": "tendermint/PrivKeyEd25519", "value": "!!"}), signer.ErrCorrupt},
		{"JSON seed only", comet.with(t, "priv_key", map[string]any{"type": "tendermint/PrivKeyEd25519", "value": comet.priv[:32]}), signer.ErrCorrupt},
		{"JSON type and @type differ", comet.with(t, "priv_key", map[string]any{"type": "tendermint/PrivKeyEd25519", "@type": "/tm.PrivKeySecp256k1", "value": comet.priv}), signer.ErrCorrupt},
		{"JSON sr25519", comet.with(t, "priv_key", map[string]any{"type": "tendermint/PrivKeySr25519", "value": comet.priv}), signer.ErrUnsupported},
		{"JSON public key as private", comet.with(t, "priv_key", map[string]any{"type": "tendermint/PubKeyEd25519", "value": comet.priv}), signer.ErrUnsupported},
		{"JSON pub_key of another key", comet.with(t, "pub_key", map[string]any{"type": "tendermint/PubKeyEd25519", "value": []byte(other[32:])}), signer.ErrInvalidKey},
		{"JSON pub_key of another type", comet.with(t, "pub_key", map[string]any{"type": "tendermint/PubKeySecp256k1", "value": comet.pub}), signer.ErrInvalidKey},
		{"JSON seed of one key, public half of another", comet.with(t, "priv_key", map[string]any{"type": "tendermint/PrivKeyEd25519", "value": mixed}), signer.ErrInvalidKey},
		{"JSON secp256k1 scalar zero", comet.with(t, "priv_key", map[string]any{"type": "tendermint/PrivKeySecp256k1", "value": make([]byte, 32)}), signer.ErrInvalidKey},
	}
	secrets := [][]byte{comet.priv, comet.priv[:32], k1d, mixed}
	for _, tc := range cases {
		_, err := inprocess.ParseKeyFile(tc.data)
		if !errors.Is(err, tc.want) {
			t.Errorf("%s: got %v, want %v", tc.name, err, tc.want)
			continue
		}
		if strings.Count(err.Error(), "inprocess:") != 1 {
			t.Errorf("%s: %q: want the package named once", tc.name, err)
		}
		for _, s := range secrets {
			if leaks(err.Error(), s) {
				t.Errorf("%s: the error quotes the key: %q", tc.name, err)
			}
		}
	}
}

// Keys MarshalKeyFile writes are read back by ParseKeyFile, by
// crypto/x509 (PKCS #8) and, when it is installed, by OpenSSL (SEC 1 on
// secp256k1, which crypto/x509 cannot read).
func TestMarshalKeyFile(t *testing.T) {
	_, ed, _ := ed25519.GenerateKey(rand.Reader)
	p256, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	p384, _ := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	d, _ := rand.Int(rand.Reader, new(big.Int).Sub(refsecp256k1.N(), big.NewInt(1)))
	d.Add(d, big.NewInt(1))
	k1 := eckey.NewPrivate(refPublic(d), d)
	rk, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	for _, priv := range []crypto.Signer{ed, p256, p384, k1, rk} {
		data, err := inprocess.MarshalKeyFile(priv)
		if err != nil {
			t.Fatalf("%T: %v", priv, err)
		}
		b, rest := pem.Decode(data)
		if b == nil || len(bytes.TrimSpace(rest)) != 0 {
			t.Fatalf("%T: not one PEM block:\n%s", priv, data)
		}
		if priv == k1 {
			if b.Type != "EC PRIVATE KEY" {
				t.Errorf("secp256k1 key as %q, want EC PRIVATE KEY", b.Type)
			}
			checkOpenSSL(t, data, uncompressed(&k1.PublicKey))
		} else {
			std, err := x509.ParsePKCS8PrivateKey(b.Bytes)
			if err != nil || b.Type != "PRIVATE KEY" {
				t.Fatalf("%T: %s block that crypto/x509 reads as %v", priv, b.Type, err)
			}
			if !equalPublic(std.(crypto.Signer).Public(), priv.Public()) {
				t.Errorf("%T: crypto/x509 reads another key", priv)
			}
		}
		back, err := inprocess.ParseKeyFile(data)
		if err != nil {
			t.Fatalf("%T: %v", priv, err)
		}
		if !equalPublic(back.(crypto.Signer).Public(), priv.Public()) {
			t.Errorf("%T: ParseKeyFile reads another key", priv)
		}
	}
	for _, tc := range []struct {
		name string
		priv crypto.PrivateKey
		want error
	}{
		{"nil", nil, signer.ErrUnsupported},
		{"a string", "key", signer.ErrUnsupported},
		{"P-521", must(ecdsa.GenerateKey(elliptic.P521(), rand.Reader)), signer.ErrUnsupported},
		{"inconsistent Ed25519", mixedEd25519(), signer.ErrInvalidKey},
	} {
		if _, err := inprocess.MarshalKeyFile(tc.priv); !errors.Is(err, tc.want) {
			t.Errorf("%s: got %v, want %v", tc.name, err, tc.want)
		}
	}
}

// checkOpenSSL has OpenSSL read a secp256k1 key file and checks the public
// key it derives.
func checkOpenSSL(t *testing.T, file, point []byte) {
	t.Helper()
	if _, err := exec.LookPath("openssl"); err != nil {
		t.Log("no openssl to read the SEC 1 file with")
		return
	}
	cmd := exec.Command("openssl", "ec", "-pubout", "-outform", "DER")
	cmd.Stdin = bytes.NewReader(file)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("openssl ec cannot read the file: %v", err)
	}
	if !bytes.HasSuffix(out, point) {
		t.Errorf("openssl derives another public key: %x", out)
	}
}

func TestWriteAndLoadKeyFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "validator.pem")
	_, priv, _ := ed25519.GenerateKey(rand.Reader)
	if err := inprocess.WriteKeyFile(path, priv); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil || (runtime.GOOS != "windows" && fi.Mode().Perm() != 0o600) {
		t.Fatalf("key file: %v, %v; want mode 0600", fi.Mode(), err)
	}
	before := must(os.ReadFile(path))
	_, again, _ := ed25519.GenerateKey(rand.Reader)
	if err := inprocess.WriteKeyFile(path, again); !errors.Is(err, signer.ErrKeyExists) {
		t.Errorf("WriteKeyFile over an existing file: got %v", err)
	}
	if after := must(os.ReadFile(path)); !bytes.Equal(before, after) {
		t.Error("a refused WriteKeyFile changed the file")
	}
	got, err := inprocess.LoadKeyFile(path)
	if err != nil || !priv.Equal(got) {
		t.Fatalf("LoadKeyFile: %v", err)
	}
	missing := filepath.Join(dir, "absent.pem")
	if _, err := inprocess.LoadKeyFile(missing); !errors.Is(err, signer.ErrKeyNotFound) || !strings.Contains(err.Error(), missing) {
		t.Errorf("missing file: got %v, want ErrKeyNotFound naming it", err)
	}
	if _, err := inprocess.LoadKeyFile(dir); !errors.Is(err, signer.ErrInvalidArgument) {
		t.Errorf("a directory: got %v", err)
	}
	if err := inprocess.WriteKeyFile(filepath.Join(dir, "no", "such", "dir"), priv); err == nil {
		t.Error("WriteKeyFile into a missing directory succeeded")
	}
}

var oidSecp256k1 = []int{1, 3, 132, 0, 10}
