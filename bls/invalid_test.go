package bls_test

import (
	"bytes"
	"context"
	"errors"
	"math/big"
	"testing"

	"github.com/cloudflare/circl/ecc/bls12381"

	"github.com/signerkit/signerkit/bls"
	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/signer/signertest"
)

// TestInvalidPublicKeys feeds ParsePublicKey points off the curve, outside
// the subgroup, at infinity, and non-canonical encodings: each must be
// refused with ErrInvalidKey, and none may panic.
func TestInvalidPublicKeys(t *testing.T) {
	good := mustSeed(t, signer.BLS12381MinPK, "good key")
	ser, comp := good.PublicKey().Bytes(), good.PublicKey().Compressed()
	offComp, offSer := offSubgroupG1(t)
	// Both libraries agree the G1 point is on the curve (blst decompresses
	// it) and outside the subgroup (circl refuses it).
	var c bls12381.G1
	if c.SetBytes(offComp) == nil {
		t.Fatal("circl accepts the point outside the subgroup")
	}
	offCurve := bytes.Clone(ser)
	offCurve[95] ^= 1
	xTooBig := append(fp(fieldP), ser[48:]...) // x = p, not reduced
	compXTooBig := fp(new(big.Int).Add(fieldP, big.NewInt(0)))
	compXTooBig[0] |= 0x80
	infSer := make([]byte, 96)
	infSer[0] = 0x40
	infComp := make([]byte, 48)
	infComp[0] = 0xc0
	flagged96 := append(bytes.Clone(comp), make([]byte, 48)...) // compressed flag on 96 bytes
	sortFlagOnSer := bytes.Clone(ser)
	sortFlagOnSer[0] |= 0x20
	noFlagComp := bytes.Clone(comp)
	noFlagComp[0] &^= 0x80

	g2 := mustSeed(t, signer.BLS12381MinSig, "good g2 key")
	g2ser, g2comp := g2.PublicKey().Bytes(), g2.PublicKey().Compressed()
	g2off := offSubgroupG2Compressed(t)
	var c2 bls12381.G2
	if c2.SetBytes(g2off) == nil {
		t.Fatal("circl accepts the G2 point outside the subgroup")
	}
	g2offCurve := bytes.Clone(g2ser)
	g2offCurve[191] ^= 1
	g2inf := make([]byte, 96)
	g2inf[0] = 0xc0
	g2infSer := make([]byte, 192)
	g2infSer[0] = 0x40

	for _, tc := range []struct {
		name string
		alg  signer.Algorithm
		b    []byte
	}{
		{"min-pk off the curve", signer.BLS12381MinPK, offCurve},
		{"min-pk outside the subgroup, compressed", signer.BLS12381MinPK, offComp},
		{"min-pk outside the subgroup, serialized", signer.BLS12381MinPK, offSer},
		{"min-pk x = p", signer.BLS12381MinPK, xTooBig},
		{"min-pk compressed x = p", signer.BLS12381MinPK, compXTooBig},
		{"min-pk infinity, serialized", signer.BLS12381MinPK, infSer},
		{"min-pk infinity, compressed", signer.BLS12381MinPK, infComp},
		{"min-pk compressed flag on 96 bytes", signer.BLS12381MinPK, flagged96},
		{"min-pk sort flag on serialized", signer.BLS12381MinPK, sortFlagOnSer},
		{"min-pk 48 bytes without the compressed flag", signer.BLS12381MinPK, noFlagComp},
		{"min-pk empty", signer.BLS12381MinPK, nil},
		{"min-pk 95 bytes", signer.BLS12381MinPK, ser[:95]},
		{"min-pk 97 bytes", signer.BLS12381MinPK, append(bytes.Clone(ser), 0)},
		{"min-pk a min-sig key", signer.BLS12381MinPK, g2comp},
		{"min-sig off the curve", signer.BLS12381MinSig, g2offCurve},
		{"min-sig outside the subgroup", signer.BLS12381MinSig, g2off},
		{"min-sig infinity, compressed", signer.BLS12381MinSig, g2inf},
		{"min-sig infinity, serialized", signer.BLS12381MinSig, g2infSer},
		{"min-sig a min-pk key", signer.BLS12381MinSig, ser},
		{"min-sig 191 bytes", signer.BLS12381MinSig, g2ser[:191]},
	} {
		k, err := bls.ParsePublicKey(tc.b, tc.alg)
		if err == nil || k != nil {
			t.Errorf("%s: ParsePublicKey = %v, %v; want an error", tc.name, k, err)
			continue
		}
		if !errors.Is(err, signer.ErrInvalidKey) {
			t.Errorf("%s: error %v does not wrap ErrInvalidKey", tc.name, err)
		}
	}
	// And the good encodings parse, to the same key.
	for _, b := range [][]byte{ser, comp} {
		k, err := bls.ParsePublicKey(b, signer.BLS12381MinPK)
		if err != nil || !k.Equal(good.PublicKey()) {
			t.Errorf("good min-pk key %x: %v", b[:4], err)
		}
	}
	for _, b := range [][]byte{g2ser, g2comp} {
		k, err := bls.ParsePublicKey(b, signer.BLS12381MinSig)
		if err != nil || !k.Equal(g2.PublicKey()) {
			t.Errorf("good min-sig key %x: %v", b[:4], err)
		}
	}
}

// TestInvalidSignatures checks that signatures at infinity, off the curve
// or outside the subgroup, and malformed ones, fail verification with
// ErrInvalidSignature, through package bls and through signer.Verify.
func TestInvalidSignatures(t *testing.T) {
	offG1, _ := offSubgroupG1(t)
	offG2 := offSubgroupG2Compressed(t)
	for _, alg := range algs {
		s := mustSeed(t, alg, "invalid signatures")
		msg := []byte("message")
		sig, _ := s.SignContext(context.Background(), msg)
		size := len(sig)
		inf := make([]byte, size)
		inf[0] = 0xc0
		off := offG2
		if alg == signer.BLS12381MinSig {
			off = offG1
		}
		uncompressedFlag := bytes.Clone(sig)
		uncompressedFlag[0] &^= 0x80
		notReduced := bytes.Clone(sig)
		copy(notReduced, fp(fieldP))
		notReduced[0] |= 0x80
		for name, bad := range map[string][]byte{
			"infinity":             inf,
			"outside the subgroup": off,
			"x = p":                notReduced,
			"without the flag":     uncompressedFlag,
			"empty":                nil,
			"one byte short":       sig[:size-1],
			"one byte long":        append(bytes.Clone(sig), 0),
			"all 0xff":             bytes.Repeat([]byte{0xff}, size),
		} {
			if err := s.PublicKey().VerifySignature(msg, bad); !errors.Is(err, signer.ErrInvalidSignature) {
				t.Errorf("%v %s: VerifySignature = %v", alg, name, err)
			}
			if err := alg.Verify(s.Public(), msg, bad); !errors.Is(err, signer.ErrInvalidSignature) {
				t.Errorf("%v %s: signer.Verify = %v", alg, name, err)
			}
			if signertest.VerifyBLS(alg, s.PublicKey().Bytes(), msg, bad, nil) == nil {
				t.Errorf("%v %s: circl accepts it", alg, name)
			}
			if _, err := bls.AggregateSignatures([][]byte{sig, bad}, alg); err == nil && name != "infinity" {
				t.Errorf("%v %s: AggregateSignatures accepts it", alg, name)
			}
		}
		// Every single-bit flip fails.
		for i := range size * 8 {
			b := bytes.Clone(sig)
			b[i/8] ^= 1 << (i % 8)
			if err := s.PublicKey().VerifySignature(msg, b); !errors.Is(err, signer.ErrInvalidSignature) {
				t.Fatalf("%v bit %d flipped: %v", alg, i, err)
			}
		}
	}
}

// TestAggregateKeysAtInfinity aggregates a key with its negation: the sum
// is the point at infinity, under which the signature at infinity would
// verify any message. FastAggregateVerify must refuse it.
func TestAggregateKeysAtInfinity(t *testing.T) {
	for _, alg := range algs {
		a := mustSeed(t, alg, "infinity")
		sk, _ := a.SecretKey()
		neg := new(big.Int).Sub(orderR, new(big.Int).SetBytes(sk)).FillBytes(make([]byte, 32))
		b, err := bls.FromSecretKey(neg, alg)
		if err != nil {
			t.Fatal(err)
		}
		defer b.Close()
		inf := make([]byte, bls.SignatureSize(alg))
		inf[0] = 0xc0
		err = bls.FastAggregateVerify([]*bls.PublicKey{a.PublicKey(), b.PublicKey()}, []byte("anything"), inf, nil)
		if !errors.Is(err, signer.ErrInvalidKey) {
			t.Errorf("%v: keys summing to infinity: %v, want ErrInvalidKey", alg, err)
		}
		// AggregateVerify with distinct messages refuses it too: the
		// signature at infinity does not verify.
		err = bls.AggregateVerify([]*bls.PublicKey{a.PublicKey(), b.PublicKey()}, [][]byte{[]byte("x"), []byte("y")}, inf, nil)
		if !errors.Is(err, signer.ErrInvalidSignature) {
			t.Errorf("%v: AggregateVerify with the signature at infinity: %v", alg, err)
		}
	}
}
