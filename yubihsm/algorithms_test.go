package yubihsm_test

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"os"
	"testing"
	"time"

	"github.com/decred/dcrd/dcrec/secp256k1/v4"
	k1ecdsa "github.com/decred/dcrd/dcrec/secp256k1/v4/ecdsa"

	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/signer/signertest"
	"github.com/signerkit/signerkit/signer/signertrace"
	"github.com/signerkit/signerkit/yubihsm"
	"github.com/signerkit/signerkit/yubihsm/yubihsmsim"
)

// TestSecp256k1LowS: the simulated device leaves S high about half the
// time, as a YubiHSM does; SignContext and Sign still give low-S
// signatures, which decred's secp256k1 verifies, as Cosmos and gno need.
func TestSecp256k1LowS(t *testing.T) {
	_, url := sim(t, yubihsmsim.Config{})
	st := openStore(t, config(url))
	ki := generate(t, st, signer.ECDSASecp256k1, "k1")
	k := openSigner(t, st, ki.Ref())
	ecPub := k.Public().(*ecdsa.PublicKey)
	compressed, err := signer.MarshalSecp256k1PublicKey(ecPub)
	if err != nil {
		t.Fatal(err)
	}
	pub, err := secp256k1.ParsePubKey(compressed)
	if err != nil {
		t.Fatal(err)
	}
	halfN := new(big.Int).Rsh(secp256k1.Params().N, 1)
	for i := range 16 {
		msg := []byte{byte(i)}
		raw, err := k.SignContext(context.Background(), msg)
		if err != nil {
			t.Fatal(err)
		}
		if len(raw) != 64 || new(big.Int).SetBytes(raw[32:]).Cmp(halfN) > 0 {
			t.Fatalf("SignContext: %x is not a low-S r‖s", raw)
		}
		var r, s secp256k1.ModNScalar
		r.SetByteSlice(raw[:32])
		s.SetByteSlice(raw[32:])
		d := sha256.Sum256(msg)
		if !k1ecdsa.NewSignature(&r, &s).Verify(d[:], pub) {
			t.Fatalf("SignContext: %x does not verify", raw)
		}
		der, err := k.Sign(nil, d[:], crypto.SHA256)
		if err != nil {
			t.Fatal(err)
		}
		sig, err := k1ecdsa.ParseDERSignature(der)
		if err != nil || !sig.Verify(d[:], pub) {
			t.Fatalf("Sign: %x does not verify (%v)", der, err)
		}
		if s := sig.S(); s.IsOverHalfOrder() {
			t.Fatalf("Sign: %x has a high S", der)
		}
		if err := signertest.VerifyStd(signer.ECDSASecp256k1, ecPub, msg, raw); err != nil {
			t.Fatal(err)
		}
	}
}

// TestRSAKeys: RSA keys of each size the device takes, imported for PKCS
// #1 v1.5 (which may also sign PSS) or for PSS (PSS only), list with
// their scheme, open as what their capabilities allow, sign what
// crypto/rsa verifies through SignContext and through Sign with SHA-256,
// -384 and -512, and refuse the scheme they may not use.
func TestRSAKeys(t *testing.T) {
	_, url := sim(t, yubihsmsim.Config{})
	st := openStore(t, config(url))
	ctx := context.Background()
	for _, bits := range []int{2048, 3072, 4096} {
		priv := testRSAKey(t, bits)
		for _, alg := range []signer.Algorithm{signer.RSAPKCS1v15, signer.RSAPSS} {
			label := alg.String() + "-" + string(rune('0'+bits/1000))
			ki, err := st.ImportKey(ctx, priv, alg, label)
			if err != nil {
				t.Fatalf("import RSA-%d as %v: %v", bits, alg, err)
			}
			if ki.Algorithm != alg || !priv.PublicKey.Equal(ki.Public) {
				t.Fatalf("RSA-%d imported as %v lists as %v", bits, alg, ki.Algorithm)
			}
			k := openSigner(t, st, ki.Ref())
			msg := []byte("a certificate")
			sig, err := k.SignContext(ctx, msg)
			if err != nil {
				t.Fatal(err)
			}
			if err := signertest.VerifyStd(alg, &priv.PublicKey, msg, sig); err != nil || len(sig) != bits/8 {
				t.Fatalf("RSA-%d %v: %d bytes, %v", bits, alg, len(sig), err)
			}
			for _, h := range []crypto.Hash{crypto.SHA256, crypto.SHA384, crypto.SHA512} {
				hh := h.New()
				hh.Write(msg)
				d := hh.Sum(nil)
				pss := &rsa.PSSOptions{SaltLength: rsa.PSSSaltLengthEqualsHash, Hash: h}
				sig, err := k.Sign(nil, d, pss)
				if err != nil || rsa.VerifyPSS(&priv.PublicKey, h, d, sig, pss) != nil {
					t.Fatalf("RSA-%d %v: PSS over %v: %v", bits, alg, h, err)
				}
				sig, err = k.Sign(nil, d, h)
				if alg == signer.RSAPSS {
					if !errors.Is(err, signer.ErrUnsupported) {
						t.Fatalf("RSA-%d PSS-only key signed PKCS #1 v1.5: %v", bits, err)
					}
					continue
				}
				if err != nil || rsa.VerifyPKCS1v15(&priv.PublicKey, h, d, sig) != nil {
					t.Fatalf("RSA-%d PKCS #1 v1.5 over %v: %v", bits, h, err)
				}
			}
			other := signer.RSAPSS
			if alg == signer.RSAPSS {
				other = signer.RSAPKCS1v15
			}
			ref := ki.Ref()
			ref.Algorithm = other
			s, err := st.OpenKey(ctx, ref)
			if alg == signer.RSAPSS {
				if !errors.Is(err, signer.ErrUnsupported) {
					t.Errorf("PSS-only key opened as %v: %v", other, err)
				}
			} else if err != nil {
				t.Errorf("PKCS #1 v1.5 key opened as PSS: %v", err)
			} else {
				s.Close()
			}
		}
	}
	d := sha512.Sum512_256([]byte("m"))
	k := openSigner(t, st, signer.KeyRef{Label: "rsa-pkcs1v15-2"})
	if _, err := k.Sign(nil, d[:], crypto.SHA512_256); !errors.Is(err, signer.ErrUnsupported) {
		t.Errorf("SHA-512/256, which the device would take for SHA-256: %v", err)
	}
	if _, err := st.ImportKey(ctx, testRSAKey(t, 2048), signer.ECDSAP256, "wrong"); !errors.Is(err, signer.ErrUnsupported) {
		t.Errorf("RSA key imported as P-256: %v", err)
	}
}

// TestNewAlgorithmsModeledTime: signing with each new kind of key puts
// the profile's device time on the caller's trace.
func TestNewAlgorithmsModeledTime(t *testing.T) {
	_, url := sim(t, yubihsmsim.Config{})
	st := openStore(t, config(url))
	for alg, want := range map[signer.Algorithm]time.Duration{
		signer.ECDSAP384:      yubihsmsim.YubiHSM2.ECDSAP384,
		signer.ECDSASecp256k1: yubihsmsim.YubiHSM2.ECDSASecp256k1,
		signer.RSAPSS:         yubihsmsim.YubiHSM2.RSA2048,
	} {
		k := openSigner(t, st, generate(t, st, alg, "t-"+alg.String()).Ref())
		var got time.Duration
		ctx := signertrace.WithTrace(context.Background(), &signertrace.Trace{StageDone: func(si signertrace.StageInfo) {
			if si.Stage == signertrace.StageDevice {
				got += si.Duration
			}
		}})
		if _, err := k.SignContext(ctx, []byte("m")); err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("%v: %v of device time, want %v", alg, got, want)
		}
	}
}

// testRSAKey is the simulator's pre-generated RSA test key of bits.
func testRSAKey(t *testing.T, bits int) *rsa.PrivateKey {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("yubihsmsim/testdata/rsa%d.pem", bits))
	if err != nil {
		t.Fatal(err)
	}
	blk, _ := pem.Decode(b)
	if blk == nil {
		t.Fatalf("rsa%d.pem: no PEM", bits)
	}
	k, err := x509.ParsePKCS8PrivateKey(blk.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return k.(*rsa.PrivateKey)
}

// TestWrapBackupNewAlgorithms: P-384, secp256k1 and RSA keys backed up
// under a wrap key and restored into a second device holding the same
// wrap key keep their public key and sign what an independent verifier
// accepts; RSA PKCS #1 v1.5 is deterministic, so the restored key gives
// the very signature the original gave.
func TestWrapBackupNewAlgorithms(t *testing.T) {
	ctx := context.Background()
	wk := yubihsm.WrapKey{ID: 7, Label: "backup", Domains: 0xffff,
		Caps: yubihsm.CapExportWrapped | yubihsm.CapImportWrapped, Delegated: yubihsm.CapAll}
	wrapKey := bytes.Repeat([]byte{0x5a}, 32)
	var stores [2]*yubihsm.Store
	for i := range stores {
		_, url := sim(t, yubihsmsim.Config{})
		stores[i] = openStore(t, config(url))
		if _, err := stores[i].PutWrapKey(ctx, wk, wrapKey); err != nil {
			t.Fatal(err)
		}
	}
	msg := []byte("a vote at height 9")
	for _, alg := range []signer.Algorithm{signer.ECDSAP384, signer.ECDSASecp256k1, signer.RSAPKCS1v15} {
		ki, err := stores[0].GenerateExportableKey(ctx, alg, "b-"+alg.String())
		if err != nil {
			t.Fatalf("%v: %v", alg, err)
		}
		want, err := openSigner(t, stores[0], ki.Ref()).SignContext(ctx, msg)
		if err != nil {
			t.Fatal(err)
		}
		blob, err := stores[0].ExportWrapped(ctx, ki.Ref(), signer.KeyRef{Label: "backup"})
		if err != nil {
			t.Fatalf("%v: ExportWrapped: %v", alg, err)
		}
		got, err := stores[1].ImportWrapped(ctx, blob, signer.KeyRef{Label: "backup"})
		if err != nil {
			t.Fatalf("%v: ImportWrapped: %v", alg, err)
		}
		if got.Algorithm != alg || !got.Public.(interface{ Equal(crypto.PublicKey) bool }).Equal(ki.Public) {
			t.Fatalf("%v: restored as %v with another public key", alg, got.Algorithm)
		}
		sig, err := openSigner(t, stores[1], got.Ref()).SignContext(ctx, msg)
		if err != nil {
			t.Fatal(err)
		}
		if err := signertest.VerifyStd(alg, ki.Public, msg, sig); err != nil {
			t.Fatalf("%v: the restored key's signature: %v", alg, err)
		}
		if alg.IsRSA() && !bytes.Equal(sig, want) {
			t.Fatalf("RSA: the restored key signs another signature")
		}
	}
}
