package yubihsmsim

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/x509"
	"encoding/binary"
	"encoding/pem"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/decred/dcrd/dcrec/secp256k1/v4"
	k1ecdsa "github.com/decred/dcrd/dcrec/secp256k1/v4/ecdsa"

	"github.com/signerkit/signerkit/yubihsm"
)

// RSATestKey reads the pre-generated RSA key of bits (2048, 3072 or 4096)
// from this package's testdata, for this package's tests and the yubihsm
// package's (making 3072- and 4096-bit keys in every run takes seconds).
func RSATestKey(t testing.TB, bits int) *rsa.PrivateKey {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	b, err := os.ReadFile(filepath.Join(filepath.Dir(file), "testdata", fmt.Sprintf("rsa%d.pem", bits)))
	if err != nil {
		t.Fatal(err)
	}
	blk, _ := pem.Decode(b)
	if blk == nil {
		t.Fatal("no PEM block")
	}
	k, err := x509.ParsePKCS8PrivateKey(blk.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return k.(*rsa.PrivateKey)
}

// rsaPrimes is an RSA key as Put Asymmetric Key takes it: p ‖ q.
func rsaPrimes(k *rsa.PrivateKey) []byte {
	half := k.Size() / 2
	out := make([]byte, 2*half)
	k.Primes[0].FillBytes(out[:half])
	k.Primes[1].FillBytes(out[half:])
	return out
}

func rsaAlg(bits int) byte {
	return map[int]byte{2048: AlgRSA2048, 3072: AlgRSA3072, 4096: AlgRSA4096}[bits]
}

// TestSignPSS: Sign PSS (key id, MGF1 algorithm, salt length, digest)
// signs as RFC 8017 says, checked by crypto/rsa, with each hash, modeled
// at the profile's RSA time; the refusals answer the device's codes.
func TestSignPSS(t *testing.T) {
	d := New(Config{})
	h, bad := newHost(t, d, 1, "password")
	if h == nil {
		t.Fatalf("session: %x", bad)
	}
	for _, bits := range []int{2048, 3072, 4096} {
		k := RSATestKey(t, bits)
		id := uint16(bits)
		if r := h.do(CmdPutAsymmetricKey, append(keyTemplate(id, "rsa", 1, CapSignPSS, rsaAlg(bits)), rsaPrimes(k)...)); r[0] != CmdPutAsymmetricKey|0x80 {
			t.Fatalf("put RSA-%d: %x", bits, r)
		}
		for _, hc := range []crypto.Hash{crypto.SHA1, crypto.SHA256, crypto.SHA384, crypto.SHA512} {
			hh := hc.New()
			hh.Write([]byte("message"))
			digest := hh.Sum(nil)
			_, off, _ := digestHash(len(digest))
			p := binary.BigEndian.AppendUint16(nil, id)
			p = append(p, AlgMGF1SHA1+off, 0, byte(hc.Size()))
			resp, stages := h.doStages(CmdSignPSS, append(p, digest...))
			if resp[0] != CmdSignPSS|0x80 {
				t.Fatalf("RSA-%d PSS %v: %x", bits, hc, resp)
			}
			sig := resp[3:]
			if err := rsa.VerifyPSS(&k.PublicKey, hc, digest, sig, &rsa.PSSOptions{SaltLength: hc.Size(), Hash: hc}); err != nil {
				t.Fatalf("RSA-%d PSS %v: %v", bits, hc, err)
			}
			if len(stages) != 1 || stages[0].Duration != YubiHSM2.rsaTime(bits) {
				t.Errorf("RSA-%d PSS modeled %v, want %v", bits, stages, YubiHSM2.rsaTime(bits))
			}
		}
	}
	digest := sha256.Sum256([]byte("message"))
	pss := func(id uint16, mgf byte, salt uint16, digest []byte) []byte {
		p := binary.BigEndian.AppendUint16(nil, id)
		p = append(p, mgf)
		p = binary.BigEndian.AppendUint16(p, salt)
		return h.do(CmdSignPSS, append(p, digest...))
	}
	for _, tc := range []struct {
		name string
		resp []byte
		code yubihsm.ErrorCode
	}{
		{"not an MGF1 algorithm", pss(2048, AlgRSAPSSSHA256, 32, digest[:]), yubihsm.CodeInvalidData},
		{"salt too long", pss(2048, AlgMGF1SHA256, 256, digest[:]), yubihsm.CodeInvalidData},
		{"31-byte digest", pss(2048, AlgMGF1SHA256, 32, digest[:31]), yubihsm.CodeWrongLength},
		{"no such key", pss(7, AlgMGF1SHA256, 32, digest[:]), yubihsm.CodeObjectNotFound},
		{"short", h.do(CmdSignPSS, []byte{8, 0, 33}), yubihsm.CodeWrongLength},
		{"PKCS1 with a PSS-only key", h.do(CmdSignPKCS1, append([]byte{8, 0}, digest[:]...)), yubihsm.CodeInsufficientPermissions},
	} {
		if !isErr(tc.resp, tc.code) {
			t.Errorf("%s: %x, want error %v", tc.name, tc.resp, tc.code)
		}
	}
	k := RSATestKey(t, 2048)
	if r := pss(2048, AlgMGF1SHA256, 0, digest[:]); r[0] != CmdSignPSS|0x80 ||
		rsa.VerifyPSS(&k.PublicKey, crypto.SHA256, digest[:], r[3:], &rsa.PSSOptions{SaltLength: rsa.PSSSaltLengthAuto}) != nil {
		t.Errorf("salt 0: %x", r)
	}
	if r := pss(2048, AlgMGF1SHA1, 20, digest[:]); r[0] != CmdSignPSS|0x80 || !pssMixedOK(&k.PublicKey, digest[:], r[3:], 20) {
		t.Errorf("SHA-256 with MGF1-SHA-1: %x", r)
	}
	if r := h.do(CmdGenerateAsymKey, keyTemplate(0x10, "p384", 1, CapSignECDSA|CapSignPSS, AlgP384)); r[0] != CmdGenerateAsymKey|0x80 {
		t.Fatalf("generate P-384: %x", r)
	}
	if r := pss(0x10, AlgMGF1SHA256, 32, digest[:]); !isErr(r, yubihsm.CodeInvalidCommand) {
		t.Errorf("PSS with a P-384 key: %x", r)
	}
	if r := h.do(CmdSetOption, []byte{OptionAlgorithmToggle, 0, 2, AlgRSAPSSSHA256, 0}); r[0] != CmdSetOption|0x80 {
		t.Fatalf("toggle rsa-pss-sha256 off: %x", r)
	}
	if r := pss(2048, AlgMGF1SHA256, 32, digest[:]); !isErr(r, yubihsm.CodeAlgorithmDisabled) {
		t.Errorf("PSS-SHA256 toggled off: %x", r)
	}
}

// TestPutKeyRefusals: key material of the wrong length or out of range is
// refused, and nothing is stored.
func TestPutKeyRefusals(t *testing.T) {
	d := New(Config{})
	h, bad := newHost(t, d, 1, "password")
	if h == nil {
		t.Fatalf("session: %x", bad)
	}
	k := RSATestKey(t, 2048)
	n := secp256k1.Params().N.FillBytes(make([]byte, 32))
	swapped := append(append([]byte{}, rsaPrimes(k)[128:]...), rsaPrimes(k)[:128]...)
	short := RSATestKey(t, 3072)
	for _, tc := range []struct {
		name string
		alg  byte
		key  []byte
		code yubihsm.ErrorCode
	}{
		{"P-384 with 32 bytes", AlgP384, make([]byte, 32), yubihsm.CodeWrongLength},
		{"P-384 zero", AlgP384, make([]byte, 48), yubihsm.CodeInvalidData},
		{"secp256k1 n", AlgSecp256k1, n, yubihsm.CodeInvalidData},
		{"secp256k1 zero", AlgSecp256k1, make([]byte, 32), yubihsm.CodeInvalidData},
		{"RSA-2048 one prime", AlgRSA2048, rsaPrimes(k)[:128], yubihsm.CodeWrongLength},
		{"RSA-2048 p = q", AlgRSA2048, append(rsaPrimes(k)[:128:128], rsaPrimes(k)[:128]...), yubihsm.CodeInvalidData},
		{"RSA-4096 of 3072-bit primes", AlgRSA4096, append(rsaPrimes(short), make([]byte, 128)...), yubihsm.CodeInvalidData},
		{"RSA-2048 of composites", AlgRSA2048, bytes.Repeat([]byte{0xff}, 256), yubihsm.CodeInvalidData},
	} {
		if r := h.do(CmdPutAsymmetricKey, append(keyTemplate(0x20, "bad", 1, CapSignECDSA|CapSignPKCS, tc.alg), tc.key...)); !isErr(r, tc.code) {
			t.Errorf("%s: %x, want %v", tc.name, r, tc.code)
		}
	}
	// q ‖ p is the same key: accepted.
	if r := h.do(CmdPutAsymmetricKey, append(keyTemplate(0x21, "swapped", 1, CapSignPKCS, AlgRSA2048), swapped...)); r[0] != CmdPutAsymmetricKey|0x80 {
		t.Errorf("RSA-2048 as q ‖ p: %x", r)
	}
	if len(d.objects) != 2 {
		t.Errorf("%d objects after the refusals, want the auth key and one RSA key", len(d.objects))
	}
}

// TestWrapNewKeys: P-384, secp256k1 and RSA keys exported under wrap
// import back (after being deleted) with the same public key, and sign
// what crypto/ecdsa, decred's secp256k1 and crypto/rsa verify.
func TestWrapNewKeys(t *testing.T) {
	d := New(Config{})
	h, bad := newHost(t, d, 1, "password")
	if h == nil {
		t.Fatalf("session: %x", bad)
	}
	wk := append(keyTemplate(1, "wrap", 1, CapExportWrapped|CapImportWrapped, AlgAES256CCMWrap), binary.BigEndian.AppendUint64(nil, CapAll)...)
	if r := h.do(CmdPutWrapKey, append(wk, make([]byte, 32)...)); r[0] != CmdPutWrapKey|0x80 {
		t.Fatalf("put wrap key: %x", r)
	}
	caps := CapSignECDSA | CapSignPKCS | CapExportableUnderWrap
	for _, tc := range []struct {
		alg byte
		key []byte
	}{{AlgP384, nil}, {AlgSecp256k1, nil}, {AlgRSA3072, rsaPrimes(RSATestKey(t, 3072))}} {
		cmd := byte(CmdGenerateAsymKey)
		if tc.key != nil {
			cmd = CmdPutAsymmetricKey
		}
		if r := h.do(cmd, append(keyTemplate(0x30, "k", 1, caps, tc.alg), tc.key...)); r[0] != cmd|0x80 {
			t.Fatalf("alg %d: %x", tc.alg, r)
		}
		pub := h.do(CmdGetPublicKey, []byte{0, 0x30})
		blob := h.do(CmdExportWrapped, []byte{0, 1, TypeAsymmetric, 0, 0x30})
		if blob[0] != CmdExportWrapped|0x80 {
			t.Fatalf("alg %d export: %x", tc.alg, blob)
		}
		if r := h.do(CmdDeleteObject, []byte{0, 0x30, TypeAsymmetric}); r[0] != CmdDeleteObject|0x80 {
			t.Fatalf("delete: %x", r)
		}
		if r := h.do(CmdImportWrapped, append([]byte{0, 1}, blob[3:]...)); !bytes.Equal(r, []byte{CmdImportWrapped | 0x80, 0, 3, TypeAsymmetric, 0, 0x30}) {
			t.Fatalf("alg %d import: %x", tc.alg, r)
		}
		if again := h.do(CmdGetPublicKey, []byte{0, 0x30}); !bytes.Equal(again, pub) {
			t.Fatalf("alg %d: public key %x after the round trip, %x before", tc.alg, again, pub)
		}
		checkSigns(t, h, tc.alg, pub[4:])
		h.do(CmdDeleteObject, []byte{0, 0x30, TypeAsymmetric})
	}
}

// checkSigns signs with key 0x30 of alg and verifies with an independent
// implementation against pub (Get Public Key's key data).
func checkSigns(t *testing.T, h *host, alg byte, pub []byte) {
	t.Helper()
	msg := []byte("signed after the round trip")
	var digest []byte
	if alg == AlgP384 {
		s := sha512.Sum384(msg)
		digest = s[:]
	} else {
		s := sha256.Sum256(msg)
		digest = s[:]
	}
	switch alg {
	case AlgP384:
		k, err := ecdsa.ParseUncompressedPublicKey(elliptic.P384(), append([]byte{4}, pub...))
		r := h.do(CmdSignECDSA, append([]byte{0, 0x30}, digest...))
		if err != nil || !ecdsa.VerifyASN1(k, digest, r[3:]) {
			t.Fatalf("P-384 signature %x does not verify (%v)", r, err)
		}
	case AlgSecp256k1:
		k, err := secp256k1.ParsePubKey(append([]byte{4}, pub...))
		r := h.do(CmdSignECDSA, append([]byte{0, 0x30}, digest...))
		sig, err2 := k1ecdsa.ParseDERSignature(r[3:])
		if err != nil || err2 != nil || !sig.Verify(digest, k) {
			t.Fatalf("secp256k1 signature %x does not verify (%v, %v)", r, err, err2)
		}
	default:
		k := &rsa.PublicKey{N: new(big.Int).SetBytes(pub), E: 65537}
		r := h.do(CmdSignPKCS1, append([]byte{0, 0x30}, digest...))
		if err := rsa.VerifyPKCS1v15(k, crypto.SHA256, digest, r[3:]); err != nil {
			t.Fatalf("RSA signature %x: %v", r, err)
		}
	}
}

// TestNewKeysModeledTime: Sign ECDSA takes the profile's time for each
// curve (accounted, not slept).
func TestNewKeysModeledTime(t *testing.T) {
	d := New(Config{})
	h, bad := newHost(t, d, 1, "password")
	if h == nil {
		t.Fatalf("session: %x", bad)
	}
	for alg, want := range map[byte]time.Duration{AlgP256: 73 * time.Millisecond, AlgP384: 120 * time.Millisecond, AlgSecp256k1: 73 * time.Millisecond} {
		h.do(CmdGenerateAsymKey, keyTemplate(0x40, "k", 1, CapSignECDSA, alg))
		r, stages := h.doStages(CmdSignECDSA, append([]byte{0, 0x40}, make([]byte, 32)...))
		if r[0] != CmdSignECDSA|0x80 || len(stages) != 1 || stages[0].Duration != want {
			t.Errorf("alg %d: %x, modeled %v, want %v", alg, r, stages, want)
		}
		h.do(CmdDeleteObject, []byte{0, 0x40, TypeAsymmetric})
	}
}

// FuzzAsymCommands feeds arbitrary payloads to Put Asymmetric Key,
// Generate Asymmetric Key (EC keys only: RSA generation takes too long per
// input), Sign ECDSA, Sign PKCS1 and Sign PSS on a device holding P-384,
// secp256k1 and RSA-2048 keys: each answers an error frame or its own
// response and never panics, and a put key answers Get Public Key.
func FuzzAsymCommands(f *testing.F) {
	k := RSATestKey(f, 2048)
	primes := rsaPrimes(k)
	f.Add(byte(0), append(keyTemplate(9, "p", 1, CapSignECDSA, AlgP384), make([]byte, 47)...))
	f.Add(byte(0), append(keyTemplate(9, "r", 1, CapSignPKCS, AlgRSA2048), primes...))
	f.Add(byte(1), keyTemplate(0, "g", 1, CapSignECDSA, AlgSecp256k1))
	f.Add(byte(2), append([]byte{0, 2}, make([]byte, 32)...))
	f.Add(byte(3), append([]byte{0, 3}, make([]byte, 48)...))
	f.Add(byte(4), append([]byte{0, 3, AlgMGF1SHA256, 0, 32}, make([]byte, 32)...))
	f.Fuzz(func(t *testing.T, cmd byte, p []byte) {
		d := New(Config{Rand: bytes.NewReader(bytes.Repeat([]byte{9}, 1<<12))})
		s := &session{auth: d.objects[objKey{TypeAuthKey, 1}]}
		caps := CapSignECDSA | CapSignPKCS | CapSignPSS
		for i, tmpl := range [][]byte{
			keyTemplate(1, "p384", 1, caps, AlgP384),
			keyTemplate(2, "k1", 1, caps, AlgSecp256k1),
		} {
			if r := d.storeKey(s, CmdGenerateAsymKey, tmpl); r[0] != CmdGenerateAsymKey|0x80 {
				t.Fatalf("key %d: %x", i, r)
			}
		}
		if r := d.storeKey(s, CmdPutAsymmetricKey, append(keyTemplate(3, "rsa", 1, caps, AlgRSA2048), primes...)); r[0] != CmdPutAsymmetricKey|0x80 {
			t.Fatalf("RSA key: %x", r)
		}
		var resp []byte
		switch cmd % 5 {
		case 0:
			resp = d.storeKey(s, CmdPutAsymmetricKey, p)
			if resp[0] == CmdPutAsymmetricKey|0x80 {
				if o := d.objects[objKey{TypeAsymmetric, binary.BigEndian.Uint16(resp[3:])}]; o == nil || len(publicBytes(o)) == 0 {
					t.Fatalf("put key %x has no public key", resp)
				}
			}
		case 1:
			if len(p) > templateLen-1 && rsaBits(p[templateLen-1]) != 0 {
				return
			}
			resp = d.storeKey(s, CmdGenerateAsymKey, p)
		case 2, 3:
			resp, _ = d.sign(s, CmdSignECDSA, p)
		default:
			c := byte(CmdSignPKCS1)
			if cmd%2 == 0 {
				c = CmdSignPSS
			}
			resp, _ = d.signRSA(s, c, p)
		}
		if len(resp) < 3 || (resp[0] != CmdError && resp[0]&0x80 == 0) {
			t.Fatalf("response %x", resp)
		}
	})
}

// pssMixedOK checks a PSS signature over a SHA-256 digest with MGF1-SHA-1
// and a salt of saltLen bytes, which crypto/rsa cannot verify (it ties
// MGF1 to the message hash): the public operation, then RFC 8017 9.1.2
// step by step (the key's size a multiple of 8, so emLen is its size).
func pssMixedOK(pub *rsa.PublicKey, digest, sig []byte, saltLen int) bool {
	em := new(big.Int).Exp(new(big.Int).SetBytes(sig), big.NewInt(int64(pub.E)), pub.N).FillBytes(make([]byte, pub.Size()))
	if em[len(em)-1] != 0xbc {
		return false
	}
	masked, hash := em[:len(em)-33], em[len(em)-33:len(em)-1]
	var mask []byte
	for c := byte(0); len(mask) < len(masked); c++ {
		s := sha1.Sum(append(bytes.Clone(hash), 0, 0, 0, c))
		mask = append(mask, s[:]...)
	}
	db := make([]byte, len(masked))
	for i := range db {
		db[i] = masked[i] ^ mask[i]
	}
	db[0] &= 0x7f
	ps, salt := db[:len(db)-saltLen-1], db[len(db)-saltLen:]
	if db[len(db)-saltLen-1] != 1 || !bytes.Equal(ps, make([]byte, len(ps))) {
		return false
	}
	want := sha256.Sum256(append(append(make([]byte, 8), digest...), salt...))
	return bytes.Equal(hash, want[:])
}
