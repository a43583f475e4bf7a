package keybase

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/signerkit/signerkit/internal/eckey"
	"github.com/signerkit/signerkit/signer"
)

// FuzzParseKeyFile feeds the key file reader (a public key block, then a
// private key block: the file a Store keeps per key) anything, both
// parsed directly and read from disk through a Store. It must not panic;
// its errors are typed; an Ed25519 public key it accepts is a usable one
// (not of small order, canonical); and a file it accepts is written back
// by keyFileBytes as a file that reads as the same key.
func FuzzParseKeyFile(f *testing.F) {
	ctx := context.Background()
	ed, _ := fromPrivate(ed25519.NewKeyFromSeed(katSeed))
	k1, _ := generate(signer.ECDSASecp256k1)
	for _, k := range []*privateKey{ed, k1} {
		for _, pass := range [][]byte{nil, []byte("pw")} {
			armor, err := seal(ctx, k, pass, MinCost, bytes.NewReader(make([]byte, 64)))
			if err != nil {
				f.Fatal(err)
			}
			file, err := keyFileBytes(k.public(), "k", armor)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(file)
			f.Add(bytes.ReplaceAll(file, []byte("\n"), []byte("\r\n")))
		}
	}
	gnokey, _ := keyFileBytes(ed.public(), "k", katArmor(f))
	f.Add(gnokey)
	named, _ := keyFileBytes(ed.public(), "my key/ключ", katArmor(f)) // with a name header
	f.Add(named)
	// A small-order (identity) public key with a real private block.
	identity := make(ed25519.PublicKey, 32)
	identity[0] = 1
	bad, _ := keyFileBytes(identity, "k", katArmor(f))
	f.Add(bad)
	f.Add([]byte("-----BEGIN TENDERMINT PUBLIC KEY-----\ntype: Info\nversion: 0.0.0\n\n=twTO\n-----END TENDERMINT PUBLIC KEY-----\n\n"))
	f.Add([]byte(""))
	ed.wipe()
	k1.wipe()

	dir := filepath.Join(f.TempDir(), "keys")
	if err := os.Mkdir(dir, 0o700); err != nil {
		f.Fatal(err)
	}
	s, err := OpenStore(ctx, Config{Dir: dir})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		kf, err := parseKeyFile(data)
		if err != nil {
			var ae *ArmorError
			var te *KeyTypeError
			switch {
			case errors.As(err, &ae), errors.As(err, &te), errors.Is(err, signer.ErrInvalidKey):
			default:
				t.Fatalf("error %v is not an *ArmorError, a *KeyTypeError or ErrInvalidKey", err)
			}
			if !errors.Is(err, signer.ErrCorrupt) && !errors.Is(err, signer.ErrUnsupported) && !errors.Is(err, signer.ErrInvalidKey) {
				t.Fatalf("error %v wraps no sentinel", err)
			}
		} else {
			switch pub := kf.pub.(type) {
			case ed25519.PublicKey:
				if kf.alg != signer.Ed25519 {
					t.Fatalf("an Ed25519 key reported as %v", kf.alg)
				}
				if err := signer.CheckEd25519PublicKey(pub); err != nil {
					t.Fatalf("accepted a degenerate Ed25519 public key %x: %v", pub, err)
				}
			case *ecdsa.PublicKey:
				x, y := eckey.Coordinates(pub)
				//lint:ignore SA1019 crypto/ecdh has no secp256k1; this IsOnCurve is decred's check behind the adaptor
				if kf.alg != signer.ECDSASecp256k1 || pub.Curve != signer.Secp256k1() || !pub.Curve.IsOnCurve(x, y) {
					t.Fatalf("a secp256k1 key reported as %v, or off the curve", kf.alg)
				}
			default:
				t.Fatalf("public key of type %T", kf.pub)
			}
			name := kf.name
			if name == "" {
				name = "k"
			} else if CheckName(name) != nil || plainName(name) {
				t.Fatalf("a name header of %q", name)
			}
			again, err := keyFileBytes(kf.pub, name, kf.sealed.armor())
			if err != nil {
				t.Fatalf("an accepted file does not write back: %v", err)
			}
			kf2, err := parseKeyFile(again)
			if err != nil {
				t.Fatalf("a file written back does not read: %v", err)
			}
			a, b := kf.sealed, kf2.sealed
			if kf2.name != kf.name || kf2.alg != kf.alg || !equalPublic(kf2.pub, kf.pub) || a.plaintext != b.plaintext || a.cost != b.cost ||
				!bytes.Equal(a.salt, b.salt) || !bytes.Equal(a.data, b.data) || len(a.headers) != len(b.headers) {
				t.Fatal("a file written back reads as another key")
			}
		}

		// The Store reads what it parses, from disk, with the same outcome.
		if err := os.WriteFile(filepath.Join(dir, "k.key"), data, 0o600); err != nil {
			t.Fatal(err)
		}
		info, serr := s.KeyInfo(ctx, "k")
		if err == nil && kf.name != "" {
			// The file names another key: not "k"'s.
			if !errors.Is(serr, signer.ErrCorrupt) {
				t.Fatalf("KeyInfo of a file whose name header is %q: %v", kf.name, serr)
			}
			return
		}
		if (serr == nil) != (err == nil) {
			t.Fatalf("KeyInfo: %v, parseKeyFile: %v", serr, err)
		}
		if serr == nil && (info.Algorithm != kf.alg || !equalPublic(info.Public, kf.pub)) {
			t.Fatal("KeyInfo describes another key than parseKeyFile")
		}
	})
}
