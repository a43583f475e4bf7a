package keybase

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"strings"
	"testing"

	"golang.org/x/crypto/nacl/secretbox"
	//lint:ignore SA1019 gnokey armors its key files with this package; the tests write and read them as it does
	pgparmor "golang.org/x/crypto/openpgp/armor"

	"github.com/signerkit/signerkit/internal/bcryptsalt"
	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/signer/signertest"
)

// testCost keeps key derivation cheap in tests; cost 12 runs only where it
// is the point (the known answers).
const testCost = 4

// docs/protocols.md C.5, decrypted by gno's own UnarmorDecryptPrivKey.
var (
	katPassword = []byte("password")
	katSalt     = mustHex("a0a1a2a3a4a5a6a7a8a9aaabacadaeaf")
	katNonce    = mustHex("101112131415161718191a1b1c1d1e1f2021222324252627")
	katSeed     = mustHex("000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f")
	katBcrypt   = "$2a$12$mIEgm4QjnocmoYoppI0spuygELuCDoRy0aHPbQJKdtXyEMoKQzl4K"
	katKey      = mustHex("5202512541c918000282a558aa3bd9f6eeb9b7189d39b1f4580ef724abe67bfc")
	// docs/protocols.md C.3: the amino bytes of the Ed25519 key of seed 00..1f.
	katAmino = mustHex("0a122f746d2e507269764b65794564323535313912420a40000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f03a107bff3ce10be1d70dd18e74bc09967e4d6309ba50d5f1ddc8664125531b8")
)

func mustHex(s string) []byte {
	b, err := hex.DecodeString(s)
	if err != nil {
		panic(err)
	}
	return b
}

func katArmor(t testing.TB) []byte {
	b, err := os.ReadFile("testdata/kat-c5.armor")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestKnownAnswerAmino(t *testing.T) {
	k, err := fromPrivate(ed25519.NewKeyFromSeed(katSeed))
	if err != nil {
		t.Fatal(err)
	}
	if got := k.amino(); !bytes.Equal(got, katAmino) {
		t.Errorf("amino bytes\n got %x\nwant %x", got, katAmino)
	}
	back, err := decodePrivate(katAmino)
	if err != nil || !bytes.Equal(back.ed25519(), k.ed25519()) {
		t.Errorf("decodePrivate(C.3 bytes) = %v, %v", back, err)
	}
}

// The C.5 armor decrypts to the C.5 key, and the key sealed with the C.5
// salt and nonce is the C.5 armor byte for byte.
func TestKnownAnswerArmor(t *testing.T) {
	t.Parallel() // two bcrypts at cost 12, on constants of its own
	ctx := context.Background()
	// The bcrypt string itself is internal/bcryptsalt's known answer.
	if k := sha256.Sum256([]byte(katBcrypt)); !bytes.Equal(k[:], katKey) {
		t.Fatalf("key = %x, want %x", k, katKey)
	}
	// Decrypt: from here on only the box key, not bcrypt, is recomputed.
	armor := katArmor(t)
	s, err := parsePrivateArmor(armor)
	if err != nil {
		t.Fatal(err)
	}
	if s.cost != DefaultCost || !bytes.Equal(s.salt, katSalt) || !bytes.Equal(s.data[:nonceSize], katNonce) {
		t.Fatalf("parsed cost %d salt %x nonce %x", s.cost, s.salt, s.data[:nonceSize])
	}
	var key [32]byte
	copy(key[:], katKey)
	plain, ok := openBox(s.data, &key)
	if !ok || !bytes.Equal(plain, katAmino) {
		t.Fatalf("C.5 ciphertext opens to %x (%v), want the C.3 bytes", plain, ok)
	}
	// The whole path, bcrypt included, through the public function.
	priv, err := DecryptArmor(ctx, armor, katPassword)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(priv.(ed25519.PrivateKey), ed25519.NewKeyFromSeed(katSeed)) {
		t.Errorf("DecryptArmor gives another key")
	}
	// Encrypt: the same salt and nonce give the same armor.
	k, _ := fromPrivate(ed25519.NewKeyFromSeed(katSeed))
	got, err := seal(ctx, k, katPassword, DefaultCost, bytes.NewReader(append(append([]byte(nil), katSalt...), katNonce...)))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, armor) {
		t.Errorf("sealed C.5 key:\n%s\nwant:\n%s", got, armor)
	}
}

// gnokey reads and writes armor with golang.org/x/crypto/openpgp/armor:
// what we write, it reads; what it writes (headers in random order), we
// read.
func TestArmorMatchesOpenPGPPackage(t *testing.T) {
	ctx := context.Background()
	for _, alg := range []signer.Algorithm{signer.Ed25519, signer.ECDSASecp256k1} {
		k, err := generate(alg)
		if err != nil {
			t.Fatal(err)
		}
		ours, err := seal(ctx, k, []byte("pw"), testCost, rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		blk, err := pgparmor.Decode(bytes.NewReader(ours))
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(blk.Body)
		if err != nil {
			t.Fatalf("openpgp/armor reading our armor: %v", err)
		}
		s, _ := parsePrivateArmor(ours)
		if blk.Type != blockPrivate || blk.Header["kdf"] != "bcrypt" || blk.Header["salt"] != strings.ToUpper(hex.EncodeToString(s.salt)) || !bytes.Equal(data, s.data) {
			t.Errorf("openpgp/armor reads type %q headers %v", blk.Type, blk.Header)
		}
		for range 8 { // map order varies: try several
			var buf bytes.Buffer
			w, _ := pgparmor.Encode(&buf, blockPrivate, map[string]string{"kdf": "bcrypt", "salt": blk.Header["salt"], "cost": "4"})
			w.Write(data)
			w.Close()
			back, err := DecryptArmor(ctx, buf.Bytes(), []byte("pw"))
			if err != nil {
				t.Fatalf("reading openpgp/armor's output:\n%s\n%v", buf.Bytes(), err)
			}
			checkSameKey(t, k, back)
		}
		// Byte for byte, with the headers in our order.
		var buf bytes.Buffer
		w, _ := pgparmor.Encode(&buf, blockPrivate, nil)
		w.Write(data)
		w.Close()
		if want := encodeBlock(block{Type: blockPrivate, Data: data}); !bytes.Equal(buf.Bytes(), want) {
			t.Errorf("openpgp/armor writes\n%q\nwe write\n%q", buf.Bytes(), want)
		}
	}
}

func checkSameKey(t *testing.T, k *privateKey, priv any) {
	t.Helper()
	switch p := priv.(type) {
	case ed25519.PrivateKey:
		if !bytes.Equal(p, k.ed25519()) {
			t.Error("another Ed25519 key came back")
		}
	case *ecdsa.PrivateKey:
		if !p.PublicKey.Equal(k.public()) {
			t.Error("another secp256k1 key came back")
		}
	default:
		t.Errorf("got a %T", priv)
	}
}

func TestRoundTrip(t *testing.T) {
	ctx := context.Background()
	for _, alg := range []signer.Algorithm{signer.Ed25519, signer.ECDSASecp256k1} {
		k, _ := generate(alg)
		var priv any
		if alg == signer.Ed25519 {
			priv = k.ed25519()
		} else {
			priv = k.k1.ToECDSA()
		}
		for _, pass := range [][]byte{[]byte("correct horse"), bytes.Repeat([]byte("x"), 100), nil} {
			armor, err := EncryptArmor(ctx, priv, pass, testCost)
			if err != nil {
				t.Fatal(err)
			}
			if len(pass) == 0 && bytes.Contains(armor, []byte("kdf")) {
				t.Errorf("empty passphrase: want gnokey's unencrypted form, got\n%s", armor)
			}
			back, err := DecryptArmor(ctx, armor, pass)
			if err != nil {
				t.Fatalf("%v, %d-byte passphrase: %v", alg, len(pass), err)
			}
			checkSameKey(t, k, back)
			if again, err := EncryptArmor(ctx, back, pass, testCost); err != nil {
				t.Errorf("%v: EncryptArmor of what DecryptArmor returned: %v", alg, err)
			} else if back2, err := DecryptArmor(ctx, again, pass); err != nil {
				t.Errorf("%v: second round: %v", alg, err)
			} else {
				checkSameKey(t, k, back2)
			}
			const wrong = "not-it-7f3a" // unlike any word of an error message
			_, err = DecryptArmor(ctx, armor, []byte(wrong))
			if !errors.Is(err, signer.ErrWrongPassphrase) {
				t.Errorf("%v, wrong passphrase: got %v, want ErrWrongPassphrase", alg, err)
			}
			if err != nil && strings.Contains(err.Error(), wrong) {
				t.Errorf("the passphrase shows in the error: %v", err)
			}
		}
	}
}

// Keys that older gnokey versions encrypted with an empty passphrase:
// under bcrypt of "" (kept working by gnokey), and under SHA-256 of
// nothing without bcrypt.
func TestLegacyEmptyPassphrase(t *testing.T) {
	ctx := context.Background()
	k, _ := generate(signer.Ed25519)
	armor, err := seal(ctx, k, nil, testCost, rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(armor, []byte("kdf")) {
		t.Fatal("want the unencrypted form")
	}
	salt := make([]byte, saltSize)
	var nonce [nonceSize]byte
	rand.Read(salt)
	rand.Read(nonce[:])
	bc, _ := bcryptsalt.Hash(ctx, nil, salt, testCost)
	viaBcrypt := sha256.Sum256(bc)
	viaNothing := sha256.Sum256(nil)
	for name, key := range map[string]*[32]byte{"bcrypt of the empty passphrase": &viaBcrypt, "SHA-256 of nothing": &viaNothing} {
		data := secretbox.Seal(nonce[:], k.amino(), &nonce, key)
		armor := encodeBlock(block{Type: blockPrivate, Headers: []header{{"kdf", "bcrypt"}, {"salt", hex.EncodeToString(salt)}, {"cost", "4"}}, Data: data})
		back, err := DecryptArmor(ctx, armor, nil)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		checkSameKey(t, k, back)
		if _, err := DecryptArmor(ctx, armor, []byte("x")); !errors.Is(err, signer.ErrWrongPassphrase) {
			t.Errorf("%s, opened with a passphrase: got %v", name, err)
		}
	}
}

func TestEncryptArmorCost(t *testing.T) {
	priv := ed25519.NewKeyFromSeed(katSeed)
	for _, cost := range []int{-1, 3, MaxCost + 1, 31, 32} {
		if _, err := EncryptArmor(context.Background(), priv, []byte("pw"), cost); !errors.Is(err, signer.ErrInvalidArgument) {
			t.Errorf("cost %d: got %v, want ErrInvalidArgument", cost, err)
		}
	}
}

func TestUnencryptedNeedsEmptyPassphrase(t *testing.T) {
	k, _ := generate(signer.Ed25519)
	armor, _ := seal(context.Background(), k, nil, 0, rand.Reader)
	_, err := DecryptArmor(context.Background(), armor, []byte("pw"))
	if !errors.Is(err, signer.ErrWrongPassphrase) {
		t.Errorf("got %v", err)
	}
}

// Damaged armor is refused with the right problem, before any key
// derivation.
func TestCorruptArmor(t *testing.T) {
	good := string(katArmor(t))
	lines := strings.Split(good, "\n")
	replace := func(i int, s string) string {
		l := append([]string(nil), lines...)
		l[i] = s
		return strings.Join(l, "\n")
	}
	without := func(i int) string {
		l := append([]string(nil), lines[:i]...)
		return strings.Join(append(l, lines[i+1:]...), "\n")
	}
	multisig := encodeBlock(block{Type: blockPrivate, Data: anyBytes("/tm.PrivKeyMultisig", make([]byte, 32))})
	cases := []struct {
		name  string
		armor string
		want  ArmorProblem
		line  int
	}{
		{"empty", "", ArmorNoBlock, 0},
		{"no BEGIN", strings.Join(lines[1:], "\n"), ArmorNoBlock, 0},
		{"truncated in the body", strings.Join(lines[:5], "\n"), ArmorTruncated, 5},
		{"truncated before END", strings.Join(lines[:8], "\n"), ArmorTruncated, 8},
		{"bad CRC", replace(7, "=BEIz"), ArmorBadChecksum, 8},
		{"no CRC", without(7), ArmorNoChecksum, 8},
		{"CRC too short", replace(7, "=BEI"), ArmorNoChecksum, 8},
		{"body changed", replace(4, strings.Replace(lines[4], "EBES", "EBET", 1)), ArmorBadChecksum, 8},
		{"bad base64", replace(5, "UHjuk13U3L8Z06ZwofAokqnOz9cnF13MgbUwEnZkvF2zqTYWoX5+EB1GQHtU+vA!"), ArmorBadBase64, 6},
		{"base64 line too long", replace(5, strings.Repeat("A", 100)), ArmorBadBase64, 6},
		{"header without colon", replace(1, "kdf bcrypt"), ArmorBadHeader, 2},
		{"header twice", replace(2, "kdf: bcrypt"), ArmorBadHeader, 3},
		{"unknown header", replace(2, "comment: hello"), ArmorUnknownHeader, 1},
		{"unknown kdf", replace(1, "kdf: scrypt"), ArmorUnknownKDF, 1},
		{"no salt", without(2), ArmorBadSalt, 1},
		{"short salt", replace(2, "salt: A0A1"), ArmorBadSalt, 1},
		{"salt not hex", replace(2, "salt: Z0A1A2A3A4A5A6A7A8A9AAABACADAEAF"), ArmorBadSalt, 1},
		{"END of another type", replace(8, "-----END TENDERMINT PUBLIC KEY-----"), ArmorBadEnd, 9},
		{"text instead of END", replace(8, "hello"), ArmorBadEnd, 9},
		{"public key block", strings.ReplaceAll(good, "PRIVATE", "PUBLIC"), ArmorBlockType, 1},
		{"trailing data", good + "\nmore", ArmorTrailingData, 10},
		{"too large", good + strings.Repeat(" ", maxArmor), ArmorTooLarge, 0},
		{"bad cost", strings.Replace(good, "salt:", "cost: 3\nsalt:", 1), ArmorBadCost, 1},
		{"cost not a number", strings.Replace(good, "salt:", "cost: 012\nsalt:", 1), ArmorBadCost, 1},
		{"cost past MaxCost", strings.Replace(good, "salt:", "cost: 21\nsalt:", 1), ArmorBadCost, 1},
		{"cost 31", strings.Replace(good, "salt:", "cost: 31\nsalt:", 1), ArmorBadCost, 1},
		{"short ciphertext", string(encodeBlock(block{Type: blockPrivate, Headers: []header{{"kdf", "bcrypt"}, {"salt", hex.EncodeToString(katSalt)}}, Data: make([]byte, 40)})), ArmorBadPayload, 1},
		{"unencrypted garbage", string(encodeBlock(block{Type: blockPrivate, Data: []byte("not amino")})), ArmorBadPayload, 0},
	}
	for _, tc := range cases {
		_, err := DecryptArmor(context.Background(), []byte(tc.armor), nil)
		var ae *ArmorError
		if !errors.As(err, &ae) {
			t.Errorf("%s: got %v, want an *ArmorError", tc.name, err)
			continue
		}
		if ae.Problem != tc.want || ae.Line != tc.line {
			t.Errorf("%s: got %v (problem %d, line %d), want %v at line %d", tc.name, err, ae.Problem, ae.Line, tc.want, tc.line)
		}
		wantSentinel := signer.ErrCorrupt
		if tc.want == ArmorUnknownKDF {
			wantSentinel = signer.ErrUnsupported
		}
		if !errors.Is(err, wantSentinel) {
			t.Errorf("%s: %v does not wrap %v", tc.name, err, wantSentinel)
		}
	}
	_, err := DecryptArmor(context.Background(), multisig, nil)
	var kte *KeyTypeError
	if !errors.As(err, &kte) || kte.Type != `"/tm.PrivKeyMultisig"` || !errors.Is(err, signer.ErrUnsupported) {
		t.Errorf("multisig key: got %v, want a *KeyTypeError wrapping ErrUnsupported", err)
	}
}

// Armor with CRLF line endings (a file edited on Windows), text before the
// block and a trailing newline still reads.
func TestArmorTolerance(t *testing.T) {
	k, _ := generate(signer.Ed25519)
	armor, _ := seal(context.Background(), k, []byte("pw"), testCost, rand.Reader)
	variants := map[string][]byte{
		"CRLF":              bytes.ReplaceAll(armor, []byte("\n"), []byte("\r\n")),
		"text before":       append([]byte("exported by gnokey\n\n"), armor...),
		"trailing newlines": append(append([]byte(nil), armor...), "\n\n"...),
		"indented":          append([]byte("  "), armor...),
	}
	for name, a := range variants {
		back, err := DecryptArmor(context.Background(), a, []byte("pw"))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		checkSameKey(t, k, back)
	}
}

func TestDecryptHonoursContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := DecryptArmor(ctx, katArmor(t), katPassword)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("got %v", err)
	}
}

// FuzzArmor feeds the armor readers anything: they must not panic, and
// what they accept must survive a round trip through the writer.
func FuzzArmor(f *testing.F) {
	f.Add(katArmor(f))
	k, _ := generate(signer.ECDSASecp256k1)
	plain, _ := seal(context.Background(), k, nil, 0, rand.Reader)
	f.Add(plain)
	file, _ := keyFileBytes(k.public(), "k", plain)
	f.Add(file)
	f.Add([]byte("-----BEGIN X-----\n\n=twTO\n-----END X-----"))
	f.Add([]byte("-----BEGIN TENDERMINT PRIVATE KEY-----\r\nkdf: bcrypt\r\n\r\nAAAA\r\n=AAAA\r\n-----END TENDERMINT PRIVATE KEY-----\r\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		l := &lines{data: data}
		b, err := decodeBlock(l)
		if err == nil {
			again, err := decodeBlock(&lines{data: encodeBlock(b)})
			if err != nil {
				t.Fatalf("re-encoded block does not read back: %v", err)
			}
			if again.Type != b.Type || !bytes.Equal(again.Data, b.Data) || len(again.Headers) != len(b.Headers) {
				t.Fatalf("round trip changed the block")
			}
		} else {
			var ae *ArmorError
			if !errors.As(err, &ae) || !errors.Is(err, signer.ErrCorrupt) {
				t.Fatalf("decodeBlock error %v is not an *ArmorError wrapping ErrCorrupt", err)
			}
		}
		s, err := parsePrivateArmor(data)
		if err == nil {
			// What a Store keeps and Export hands on, gnokey's reader
			// reads as the same block.
			armored := s.armor()
			blk, err := pgparmor.Decode(bytes.NewReader(armored))
			if err != nil {
				t.Fatalf("openpgp/armor cannot read %q: %v", armored, err)
			}
			body, err := io.ReadAll(blk.Body)
			if err != nil || blk.Type != blockPrivate || !bytes.Equal(body, s.data) {
				t.Fatalf("openpgp/armor reads %q as %q %x (%v)", armored, blk.Type, body, err)
			}
		}
		if err == nil && s.plaintext {
			if k, err := decodePrivate(s.data); err == nil {
				// A key that decodes is a whole key: it signs, and its
				// signatures verify under its public key.
				sig, err := (&Signer{alg: k.alg, key: k}).SignContext(context.Background(), data)
				if err != nil {
					t.Fatal(err)
				}
				if err := signertest.VerifyStd(k.alg, k.public(), data, sig); err != nil {
					t.Fatal(err)
				}
				k.wipe()
			}
		}
		parseKeyFile(data)
		decodePublic(data)
		decodePrivate(data)
	})
}

// FuzzAmino feeds the amino key decoders anything: a key they accept
// encodes back to the same bytes.
func FuzzAmino(f *testing.F) {
	f.Add(katAmino)
	k, _ := generate(signer.ECDSASecp256k1)
	f.Add(k.amino())
	pub, _ := publicAmino(k.public())
	f.Add(pub)
	edPub, _ := publicAmino(ed25519.NewKeyFromSeed(katSeed).Public())
	f.Add(edPub)
	f.Fuzz(func(t *testing.T, data []byte) {
		if k, err := decodePrivate(data); err == nil {
			if !bytes.Equal(k.amino(), data) {
				t.Fatalf("private key %x encodes back as %x", data, k.amino())
			}
		}
		if _, pub, err := decodePublic(data); err == nil {
			if again, err := publicAmino(pub); err != nil || !bytes.Equal(again, data) {
				t.Fatalf("public key %x encodes back as %x (%v)", data, again, err)
			}
		}
	})
}
