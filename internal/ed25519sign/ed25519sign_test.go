package ed25519sign

import (
	"bytes"
	"crypto"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha512"
	"encoding/hex"
	"encoding/json"
	"os"
	"testing"
)

func TestRFC8032(t *testing.T) {
	raw, err := os.ReadFile("../../inprocess/testdata/rfc8032_ed25519.json")
	if err != nil {
		t.Fatal(err)
	}
	var vectors []struct{ Name, Secret, Public, Message, Signature string }
	if err := json.Unmarshal(raw, &vectors); err != nil {
		t.Fatal(err)
	}
	if len(vectors) < 3 {
		t.Fatalf("only %d vectors", len(vectors))
	}
	for _, v := range vectors {
		t.Run(v.Name, func(t *testing.T) {
			seed, _ := hex.DecodeString(v.Secret)
			msg, _ := hex.DecodeString(v.Message)
			var k PrivateKey
			if err := k.SetSeed(seed); err != nil {
				t.Fatal(err)
			}
			if got := hex.EncodeToString(k.Public()); got != v.Public {
				t.Errorf("public key %s, want %s", got, v.Public)
			}
			sig := k.Sign(msg)
			if got := hex.EncodeToString(sig); got != v.Signature {
				t.Errorf("signature %s, want %s", got, v.Signature)
			}
			if sig2, _ := SignSeed(seed, msg); !bytes.Equal(sig2, sig) {
				t.Error("SignSeed differs from Sign")
			}
			if !ed25519.Verify(k.Public(), msg, sig) {
				t.Error("crypto/ed25519 rejects the signature")
			}
		})
	}
}

// TestRFC8032Variants checks Ed25519ctx (RFC 8032 7.2, TEST foo) and
// Ed25519ph (7.3, TEST abc).
func TestRFC8032Variants(t *testing.T) {
	for _, v := range []struct {
		name, secret, public, msg, ctx, sig string
		hash                                crypto.Hash
	}{
		{"ctx foo", "0305334e381af78f141cb666f6199f57bc3495335a256a95bd2a55bf546663f6", "dfc9425e4f968f7f0c29f0259cf5f9aed6851c2bb4ad8bfb860cfee0ab248292", "f726936d19c800494e3fdaff20b276a8", "666f6f", "55a4cc2f70a54e04288c5f4cd1e45a7bb520b36292911876cada7323198dd87a8b36950b95130022907a7fb7c4e9b2d5f6cca685a587b4b21f4b888e4e7edb0d", 0},
		{"ph abc", "833fe62409237b9d62ec77587520911e9a759cec1d19755b7da901b96dca3d42", "ec172b93ad5e563bf4932c70e1245034c35467ef2efd4d64ebf819683467e2bf", "616263", "", "98a70222f0b8121aa9d30f813d683f809e462b469c7ff87639499bb94e6dae4131f85042463c2a355a2003d062adf5aaa10b8c61e636062aaad11c2a26083406", crypto.SHA512},
	} {
		t.Run(v.name, func(t *testing.T) {
			seed, _ := hex.DecodeString(v.secret)
			msg, _ := hex.DecodeString(v.msg)
			ctx, _ := hex.DecodeString(v.ctx)
			var k PrivateKey
			k.SetSeed(seed)
			if got := hex.EncodeToString(k.Public()); got != v.public {
				t.Errorf("public key %s, want %s", got, v.public)
			}
			if v.hash == crypto.SHA512 {
				h := sha512.Sum512(msg)
				msg = h[:]
			}
			sig, err := k.SignOptions(msg, v.hash, string(ctx))
			if err != nil {
				t.Fatal(err)
			}
			if got := hex.EncodeToString(sig); got != v.sig {
				t.Errorf("signature %s, want %s", got, v.sig)
			}
			if err := ed25519.VerifyWithOptions(k.Public(), msg, sig, &ed25519.Options{Hash: v.hash, Context: string(ctx)}); err != nil {
				t.Error(err)
			}
		})
	}
}

// TestAgainstStdlib compares keys and signatures with crypto/ed25519 on
// random keys and messages of every length up to 300 bytes, in all three
// variants.
func TestAgainstStdlib(t *testing.T) {
	for n := 0; n <= 300; n++ {
		seed := make([]byte, 32)
		msg := make([]byte, n)
		rand.Read(seed)
		rand.Read(msg)
		std := ed25519.NewKeyFromSeed(seed)
		var k PrivateKey
		if err := k.SetPrivateKey(std); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(k.AppendPrivateKey(nil), std) || !bytes.Equal(k.AppendSeed(nil), seed) {
			t.Fatal("key forms differ")
		}
		if got, want := k.Sign(msg), ed25519.Sign(std, msg); !bytes.Equal(got, want) {
			t.Fatalf("%d-byte message: signature %x, want %x", n, got, want)
		}
		ctx := string(msg[:min(n, 255)])
		got, err := k.SignOptions(msg, 0, ctx)
		want, _ := std.Sign(nil, msg, &ed25519.Options{Context: ctx})
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("Ed25519ctx, %d-byte context: %x, %v; want %x", len(ctx), got, err, want)
		}
		h := sha512.Sum512(msg)
		got, err = k.SignOptions(h[:], crypto.SHA512, ctx)
		want, _ = std.Sign(nil, h[:], &ed25519.Options{Hash: crypto.SHA512, Context: ctx})
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("Ed25519ph: %x, %v; want %x", got, err, want)
		}
	}
}

func TestRefusals(t *testing.T) {
	var k PrivateKey
	if k.SetSeed(make([]byte, 31)) == nil || k.SetPrivateKey(make([]byte, 63)) == nil {
		t.Error("wrong lengths accepted")
	}
	priv := ed25519.NewKeyFromSeed(make([]byte, 32))
	priv[40] ^= 1
	if k.SetPrivateKey(priv) == nil {
		t.Error("mismatched public half accepted")
	}
	if k != (PrivateKey{}) {
		t.Error("refused key not wiped")
	}
	k.SetSeed(make([]byte, 32))
	if _, err := k.SignOptions(make([]byte, 63), crypto.SHA512, ""); err == nil {
		t.Error("Ed25519ph over 63 bytes accepted")
	}
	if _, err := k.SignOptions(nil, crypto.SHA256, ""); err == nil {
		t.Error("SHA-256 accepted")
	}
	if _, err := k.SignOptions(nil, 0, string(make([]byte, 256))); err == nil {
		t.Error("256-byte context accepted")
	}
	if _, err := SignSeed(make([]byte, 33), nil); err == nil {
		t.Error("SignSeed: 33-byte seed accepted")
	}
}

func TestSHA512(t *testing.T) {
	data := make([]byte, 600)
	rand.Read(data)
	for n := 0; n <= len(data); n++ {
		var d digest
		var out [64]byte
		d.reset()
		// Write in uneven pieces.
		p := data[:n]
		for i := 0; len(p) > 0; i++ {
			c := min(len(p), i*7%130+1)
			d.write(p[:c])
			p = p[c:]
		}
		d.sum(&out)
		if want := sha512.Sum512(data[:n]); out != want {
			t.Fatalf("SHA-512 of %d bytes: %x, want %x", n, out, want)
		}
		d.wipe()
		if d != (digest{}) {
			t.Fatal("wipe left state")
		}
	}
}

func TestWipe(t *testing.T) {
	k, release := NewLocked()
	seed := bytes.Repeat([]byte{7}, 32)
	if err := k.SetSeed(seed); err != nil {
		t.Fatal(err)
	}
	sig := k.Sign([]byte("m"))
	if !ed25519.Verify(k.Public(), []byte("m"), sig) {
		t.Fatal("signature from locked memory does not verify")
	}
	k.Wipe()
	if *k != (PrivateKey{}) {
		t.Error("Wipe left key bytes")
	}
	release()
}

func FuzzSign(f *testing.F) {
	f.Add(make([]byte, 32), []byte(""))
	f.Add(bytes.Repeat([]byte{0xff}, 32), bytes.Repeat([]byte("vote"), 60))
	f.Fuzz(func(t *testing.T, seed, msg []byte) {
		if len(seed) != 32 {
			if _, err := SignSeed(seed, msg); err == nil {
				t.Fatal("bad seed accepted")
			}
			return
		}
		std := ed25519.NewKeyFromSeed(seed)
		want := ed25519.Sign(std, msg)
		var k PrivateKey
		k.SetSeed(seed)
		if got := k.Sign(msg); !bytes.Equal(got, want) {
			t.Fatalf("Sign %x, want %x", got, want)
		}
		if got, _ := SignSeed(seed, msg); !bytes.Equal(got, want) {
			t.Fatalf("SignSeed %x, want %x", got, want)
		}
		if !ed25519.Verify(std.Public().(ed25519.PublicKey), msg, want) {
			t.Fatal("does not verify")
		}
	})
}

func BenchmarkSign(b *testing.B) {
	msg := make([]byte, 120)
	seed := make([]byte, 32)
	std := ed25519.NewKeyFromSeed(seed)
	var k PrivateKey
	k.SetSeed(seed)
	b.Run("impl=ed25519sign", func(b *testing.B) {
		for b.Loop() {
			k.Sign(msg)
		}
	})
	b.Run("impl=stdlib", func(b *testing.B) {
		for b.Loop() {
			ed25519.Sign(std, msg)
		}
	})
	b.Run("impl=SignSeed", func(b *testing.B) {
		for b.Loop() {
			SignSeed(seed, msg)
		}
	})
}
