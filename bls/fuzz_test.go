package bls_test

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/cloudflare/circl/ecc/bls12381"

	"github.com/signerkit/signerkit/bls"
	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/signer/signertest"
)

func fuzzAlg(a uint8) signer.Algorithm { return algs[a%2] }

// circlAcceptsKey reports whether circl decodes b as a point of the
// subgroup other than infinity, in one of its canonical encodings.
func circlAcceptsKey(alg signer.Algorithm, b []byte) bool {
	if alg == signer.BLS12381MinPK {
		var p bls12381.G1
		return p.SetBytes(b) == nil && !p.IsIdentity() && (bytes.Equal(b, p.Bytes()) || bytes.Equal(b, p.BytesCompressed()))
	}
	var p bls12381.G2
	return p.SetBytes(b) == nil && !p.IsIdentity() && (bytes.Equal(b, p.Bytes()) || bytes.Equal(b, p.BytesCompressed()))
}

// circlAcceptsSig reports whether circl decodes b as a compressed point of
// the signature group's subgroup (infinity included, as CometBFT allows).
func circlAcceptsSig(alg signer.Algorithm, b []byte) bool {
	if alg == signer.BLS12381MinPK {
		var p bls12381.G2
		return len(b) == 96 && p.SetBytes(b) == nil && bytes.Equal(b, p.BytesCompressed())
	}
	var p bls12381.G1
	return len(b) == 48 && p.SetBytes(b) == nil && bytes.Equal(b, p.BytesCompressed())
}

// FuzzParsePublicKey checks the public-key decoder against circl's: both
// accept exactly the canonical encodings of points of the subgroup other
// than infinity, never panic, and what is accepted re-encodes to itself.
func FuzzParsePublicKey(f *testing.F) {
	for _, alg := range algs {
		s := mustSeed(f, alg, "fuzz parse")
		f.Add(uint8(alg-signer.BLS12381MinPK), s.PublicKey().Bytes())
		f.Add(uint8(alg-signer.BLS12381MinPK), s.PublicKey().Compressed())
	}
	f.Add(uint8(0), append([]byte{0xc0}, make([]byte, 47)...))
	f.Add(uint8(1), append([]byte{0x40}, make([]byte, 191)...))
	f.Fuzz(func(t *testing.T, a uint8, b []byte) {
		alg := fuzzAlg(a)
		k, err := bls.ParsePublicKey(b, alg)
		if want := circlAcceptsKey(alg, b); (err == nil) != want {
			t.Fatalf("%v key %x: ours %v, circl accepts %v", alg, b, err, want)
		}
		if err != nil {
			if !errors.Is(err, signer.ErrInvalidKey) {
				t.Fatalf("error %v does not wrap ErrInvalidKey", err)
			}
			return
		}
		if !bytes.Equal(b, k.Bytes()) && !bytes.Equal(b, k.Compressed()) {
			t.Fatalf("key %x re-encodes as %x / %x", b, k.Bytes(), k.Compressed())
		}
		if err := alg.CheckKey(k); err != nil {
			t.Fatal(err)
		}
	})
}

// FuzzVerify checks the signature decoder and verification: the decoder
// agrees with circl's, verification never panics, and nothing but the
// real signature verifies, by either library.
func FuzzVerify(f *testing.F) {
	var keys [2]*bls.Signer
	var sigs [2][]byte
	msg := []byte("fuzz verify")
	for i, alg := range algs {
		keys[i] = mustSeed(f, alg, "fuzz verify")
		sigs[i], _ = keys[i].SignContext(context.Background(), msg)
		other, _ := mustSeed(f, alg, "fuzz other").SignContext(context.Background(), msg)
		f.Add(uint8(i), msg, other)
		f.Add(uint8(i), msg, append([]byte{0xc0}, make([]byte, len(other)-1)...))
	}
	f.Fuzz(func(t *testing.T, a uint8, m, sig []byte) {
		i := int(a % 2)
		alg, k := algs[i], keys[i]
		_, aggErr := bls.AggregateSignatures([][]byte{sig}, alg)
		if want := circlAcceptsSig(alg, sig); (aggErr == nil) != want {
			t.Fatalf("%v signature %x: our decoder %v, circl accepts %v", alg, sig, aggErr, want)
		}
		err := k.PublicKey().VerifySignature(m, sig)
		real := bytes.Equal(m, msg) && bytes.Equal(sig, sigs[i])
		if real != (err == nil) {
			t.Fatalf("%v: VerifySignature(%x, %x) = %v", alg, m, sig, err)
		}
		if err != nil && !errors.Is(err, signer.ErrInvalidSignature) {
			t.Fatalf("error %v does not wrap ErrInvalidSignature", err)
		}
		if cerr := signertest.VerifyBLS(alg, k.PublicKey().Bytes(), m, sig, nil); (cerr == nil) != real {
			t.Fatalf("%v: circl says %v", alg, cerr)
		}
	})
}

// FuzzAggregate feeds the aggregate verifiers signatures and messages cut
// from fuzzed bytes, over fixed keys: they never panic and never accept.
func FuzzAggregate(f *testing.F) {
	var keys [2][]*bls.PublicKey
	var seeds [2][]byte
	for i, alg := range algs {
		var sigs [][]byte
		for j := range 3 {
			s := mustSeed(f, alg, "fuzz aggregate "+string(rune('a'+j)))
			keys[i] = append(keys[i], s.PublicKey())
			sig, _ := s.SignContext(context.Background(), []byte{byte(j)})
			sigs = append(sigs, sig)
		}
		agg, _ := bls.AggregateSignatures(sigs, alg)
		seeds[i] = agg
		f.Add(uint8(i), uint8(3), append(bytes.Clone(agg), 0, 1, 2))
		f.Add(uint8(i), uint8(2), bytes.Repeat(sigs[0], 2))
	}
	f.Fuzz(func(t *testing.T, a, n uint8, data []byte) {
		i := int(a % 2)
		alg := algs[i]
		size := bls.SignatureSize(alg)
		count := int(n%4) + 1
		var sigs [][]byte
		rest := data
		for len(rest) >= size && len(sigs) < count {
			sigs = append(sigs, rest[:size])
			rest = rest[size:]
		}
		if agg, err := bls.AggregateSignatures(sigs, alg); err == nil && len(agg) != size {
			t.Fatalf("aggregate is %d bytes", len(agg))
		} else if err != nil && !errors.Is(err, signer.ErrInvalidSignature) {
			t.Fatalf("AggregateSignatures error %v does not wrap ErrInvalidSignature", err)
		}
		var sig []byte
		if len(sigs) > 0 {
			sig = sigs[0]
		}
		// Messages: the rest, one byte each, up to the key count.
		msgs := make([][]byte, 0, len(keys[i]))
		for j := 0; j < len(rest) && j < len(keys[i]); j++ {
			msgs = append(msgs, rest[j:j+1])
		}
		// The real aggregate over 0, 1, 2 is the only one that verifies.
		real := bytes.Equal(sig, seeds[i]) && len(msgs) == 3 && msgs[0][0] == 0 && msgs[1][0] == 1 && msgs[2][0] == 2
		if err := bls.AggregateVerify(keys[i], msgs, sig, nil); (err == nil) != real {
			t.Fatalf("AggregateVerify(%x, %x) = %v", msgs, sig, err)
		}
		if err := bls.FastAggregateVerify(keys[i], rest, sig, nil); err == nil {
			t.Fatalf("FastAggregateVerify accepted %x over %x", sig, rest)
		}
	})
}

// FuzzParseKeyFile checks the key file parser: no panic, typed errors, and
// a file it accepts says the same key once written back.
func FuzzParseKeyFile(f *testing.F) {
	s := mustSeed(f, signer.BLS12381MinPK, "fuzz key file")
	good, err := bls.MarshalKeyFile(s)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add([]byte(`{"pub_key":{"type":"cometbft/PubKeyBls12_381","value":""},"priv_key":{"type":"cometbft/PrivKeyBls12_381","value":"AAAA"}}`))
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		k, err := bls.ParseKeyFile(data, 0)
		if err != nil {
			if !errors.Is(err, signer.ErrCorrupt) && !errors.Is(err, signer.ErrInvalidKey) && !errors.Is(err, signer.ErrUnsupported) {
				t.Fatalf("error %v wraps no expected sentinel", err)
			}
			return
		}
		defer k.Close()
		again, err := bls.MarshalKeyFile(k)
		if err != nil {
			t.Fatal(err)
		}
		k2, err := bls.ParseKeyFile(again, 0)
		if err != nil {
			t.Fatalf("written back: %v", err)
		}
		defer k2.Close()
		if !k2.PublicKey().Equal(k.PublicKey()) {
			t.Fatal("key changed on the way back")
		}
	})
}
