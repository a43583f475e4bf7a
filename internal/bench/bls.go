//go:build cgo

package bench

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"

	"github.com/cloudflare/circl/ecc/bls12381"
	circlbls "github.com/cloudflare/circl/sign/bls"
	blst "github.com/supranational/blst/bindings/go"

	"github.com/signerkit/signerkit/bls"
	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/signer/signertest"
)

// The BLS rows. Sign: bls-<scheme> is package bls's Signer; raw-blst-<scheme>
// is blst's Sign called directly on the same kind of key, the floor the
// signer is held to; raw-circl-<scheme> is cloudflare/circl's pure-Go
// sign/bls, which a build without cgo could sign with. Verify: blst and
// circl on single signatures over LargePayloads, and blst on aggregates of
// 100 signatures, over one message (FastAggregateVerify) and over 100
// distinct ones (AggregateVerify). Every signature is checked before
// timing by the other library.
func init() {
	for _, alg := range signer.BLSAlgorithms() {
		scheme := blsScheme(alg)
		Register(Backend{Name: "bls-" + scheme, Algorithm: alg, Payloads: LargePayloads, Open: openBLS(alg)})
		Register(Backend{Name: "raw-blst-" + scheme, Algorithm: alg, Payloads: LargePayloads, Open: openRawBlst(alg)})
		Register(Backend{Name: "raw-circl-" + scheme, Algorithm: alg, Payloads: LargePayloads, Open: openRawCircl(alg)})
	}
	for _, alg := range signer.BLSAlgorithms() {
		RegisterVerify(VerifyCase{Name: alg.String(), Sign: signBLS(alg)})
		RegisterVerify(VerifyCase{Name: "circl-" + alg.String(), Sign: signCircl(alg)})
		RegisterVerify(VerifyCase{Name: alg.String() + "-aggregate100-samemsg", Payloads: []int{32}, Sign: signAggregate(alg, 100, true)})
		RegisterVerify(VerifyCase{Name: alg.String() + "-aggregate100-distinct", Payloads: []int{32}, Sign: signAggregate(alg, 100, false)})
	}
}

// blsScheme is "minpk" or "minsig".
func blsScheme(alg signer.Algorithm) string {
	if alg == signer.BLS12381MinSig {
		return "minsig"
	}
	return "minpk"
}

func openBLS(alg signer.Algorithm) func(context.Context, Params) (*Instance, error) {
	return func(context.Context, Params) (*Instance, error) {
		s, err := bls.GenerateKey(alg)
		if err != nil {
			return nil, err
		}
		return FromSigner(s), nil
	}
}

// newBlstKey makes a blst secret key from random keying material, with
// its public key as package bls parses it (for signertest.VerifyStd).
func newBlstKey(alg signer.Algorithm) (*blst.SecretKey, *bls.PublicKey, error) {
	ikm := make([]byte, 32)
	rand.Read(ikm)
	sk := blst.KeyGen(ikm)
	var pub []byte
	if alg == signer.BLS12381MinPK {
		pub = new(blst.P1Affine).From(sk).Serialize()
	} else {
		pub = new(blst.P2Affine).From(sk).Serialize()
	}
	pk, err := bls.ParsePublicKey(pub, alg)
	return sk, pk, err
}

func openRawBlst(alg signer.Algorithm) func(context.Context, Params) (*Instance, error) {
	return func(context.Context, Params) (*Instance, error) {
		sk, pk, err := newBlstKey(alg)
		if err != nil {
			return nil, err
		}
		dst := []byte(bls.DST(alg))
		sign := func(_ context.Context, msg []byte) ([]byte, error) {
			return new(blst.P2Affine).Sign(sk, msg, dst).Compress(), nil
		}
		if alg == signer.BLS12381MinSig {
			sign = func(_ context.Context, msg []byte) ([]byte, error) {
				return new(blst.P1Affine).Sign(sk, msg, dst).Compress(), nil
			}
		}
		return &Instance{Sign: sign, Public: pk, Close: func() error { sk.Zeroize(); return nil }}, nil
	}
}

func openRawCircl(alg signer.Algorithm) func(context.Context, Params) (*Instance, error) {
	return func(context.Context, Params) (*Instance, error) {
		ikm := make([]byte, 32)
		rand.Read(ikm)
		if alg == signer.BLS12381MinPK {
			return circlInstance[circlbls.KeyG1SigG2](alg, ikm)
		}
		return circlInstance[circlbls.KeyG2SigG1](alg, ikm)
	}
}

func circlInstance[K circlbls.KeyGroup](alg signer.Algorithm, ikm []byte) (*Instance, error) {
	k, err := circlbls.KeyGen[K](ikm, nil, nil)
	if err != nil {
		return nil, err
	}
	b, err := k.PublicKey().MarshalBinary()
	if err != nil {
		return nil, err
	}
	pk, err := bls.ParsePublicKey(b, alg)
	if err != nil {
		return nil, err
	}
	return &Instance{
		Sign:   func(_ context.Context, msg []byte) ([]byte, error) { return circlbls.Sign(k, msg), nil },
		Public: pk,
	}, nil
}

// signBLS signs with package bls (blst), checks with circl, and times
// PublicKey.VerifySignature: blst's Uncompress, SigValidate and Verify,
// as CometBFT's VerifySignature calls them.
func signBLS(alg signer.Algorithm) func(int) (Signed, error) {
	return func(size int) (Signed, error) {
		s, err := bls.GenerateKey(alg)
		if err != nil {
			return Signed{}, err
		}
		defer s.Close()
		msg := randomMessage(size)
		sig, err := s.SignContext(context.Background(), msg)
		if err != nil {
			return Signed{}, err
		}
		pub := s.PublicKey()
		if err := signertest.VerifyBLS(alg, pub.Bytes(), msg, sig, nil); err != nil {
			return Signed{}, err
		}
		return Signed{Msg: msg, Sig: sig, Verify: pub.VerifySignature}, nil
	}
}

// signCircl signs with circl's sign/bls, checks with blst (package bls),
// and times circl's Verify.
func signCircl(alg signer.Algorithm) func(int) (Signed, error) {
	return func(size int) (Signed, error) {
		ikm := make([]byte, 32)
		rand.Read(ikm)
		msg := randomMessage(size)
		if alg == signer.BLS12381MinPK {
			return circlSigned[circlbls.KeyG1SigG2](alg, ikm, msg)
		}
		return circlSigned[circlbls.KeyG2SigG1](alg, ikm, msg)
	}
}

func circlSigned[K circlbls.KeyGroup](alg signer.Algorithm, ikm, msg []byte) (Signed, error) {
	k, err := circlbls.KeyGen[K](ikm, nil, nil)
	if err != nil {
		return Signed{}, err
	}
	pub := k.PublicKey()
	sig := circlbls.Sign(k, msg)
	b, err := pub.MarshalBinary()
	if err != nil {
		return Signed{}, err
	}
	pk, err := bls.ParsePublicKey(b, alg)
	if err != nil {
		return Signed{}, err
	}
	if err := pk.VerifySignature(msg, sig); err != nil {
		return Signed{}, fmt.Errorf("bench: circl's %v signature, checked by blst: %w", alg, err)
	}
	return Signed{Msg: msg, Sig: sig, Verify: func(msg, sig []byte) error {
		if !circlbls.Verify(pub, msg, sig) {
			return fmt.Errorf("bench: circl: %v signature does not verify", alg)
		}
		return nil
	}}, nil
}

// signAggregate makes n keys and the aggregate of their signatures over
// one message of size bytes (same) or over n distinct messages, msg‖i, and
// times FastAggregateVerify or AggregateVerify. The aggregate is checked
// first with circl: against the keys' sum for one message, with circl's
// VerifyAggregate for distinct ones.
func signAggregate(alg signer.Algorithm, n int, same bool) func(int) (Signed, error) {
	return func(size int) (Signed, error) {
		msg := randomMessage(size)
		msgs := distinctMessages(msg, n)
		pubs := make([]*bls.PublicKey, n)
		sigs := make([][]byte, n)
		for i := range n {
			s, err := bls.GenerateKey(alg)
			if err != nil {
				return Signed{}, err
			}
			m := msgs[i]
			if same {
				m = msg
			}
			sigs[i], err = s.SignContext(context.Background(), m)
			s.Close()
			if err != nil {
				return Signed{}, err
			}
			pubs[i] = s.PublicKey()
		}
		agg, err := bls.AggregateSignatures(sigs, alg)
		if err != nil {
			return Signed{}, err
		}
		if same {
			sum, err := circlSum(alg, pubs)
			if err != nil {
				return Signed{}, err
			}
			if err := signertest.VerifyBLS(alg, sum, msg, agg, nil); err != nil {
				return Signed{}, fmt.Errorf("bench: circl under the summed key: %w", err)
			}
			return Signed{Msg: msg, Sig: agg, Verify: func(msg, sig []byte) error {
				return bls.FastAggregateVerify(pubs, msg, sig, nil)
			}}, nil
		}
		var ok bool
		if alg == signer.BLS12381MinPK {
			ok, err = circlVerifyAggregate[circlbls.KeyG1SigG2](pubs, msgs, agg)
		} else {
			ok, err = circlVerifyAggregate[circlbls.KeyG2SigG1](pubs, msgs, agg)
		}
		if err != nil || !ok {
			return Signed{}, fmt.Errorf("bench: circl's VerifyAggregate rejects the %v aggregate: %v", alg, err)
		}
		return Signed{Msg: msg, Sig: agg, Verify: func(m, sig []byte) error {
			ms := msgs
			if string(m) != string(msg) {
				ms = distinctMessages(m, n)
			}
			return bls.AggregateVerify(pubs, ms, sig, nil)
		}}, nil
	}
}

// circlVerifyAggregate checks an aggregate over distinct messages with
// circl's sign/bls.
func circlVerifyAggregate[K circlbls.KeyGroup](pubs []*bls.PublicKey, msgs [][]byte, agg []byte) (bool, error) {
	keys := make([]*circlbls.PublicKey[K], len(pubs))
	for i, p := range pubs {
		keys[i] = new(circlbls.PublicKey[K])
		if err := keys[i].UnmarshalBinary(p.Compressed()); err != nil {
			return false, err
		}
	}
	return circlbls.VerifyAggregate(keys, msgs, agg), nil
}

// distinctMessages returns msg‖i for i < n (i as two bytes).
func distinctMessages(msg []byte, n int) [][]byte {
	out := make([][]byte, n)
	for i := range out {
		out[i] = append(append([]byte(nil), msg...), byte(i>>8), byte(i))
	}
	return out
}

// circlSum adds public keys with circl's arithmetic alone and returns the
// compressed sum.
func circlSum(alg signer.Algorithm, pubs []*bls.PublicKey) ([]byte, error) {
	bad := errors.New("bench: circl cannot parse a public key")
	if alg == signer.BLS12381MinPK {
		var sum, p bls12381.G1
		sum.SetIdentity()
		for _, k := range pubs {
			if p.SetBytes(k.Compressed()) != nil {
				return nil, bad
			}
			sum.Add(&sum, &p)
		}
		return sum.BytesCompressed(), nil
	}
	var sum, p bls12381.G2
	sum.SetIdentity()
	for _, k := range pubs {
		if p.SetBytes(k.Compressed()) != nil {
			return nil, bad
		}
		sum.Add(&sum, &p)
	}
	return sum.BytesCompressed(), nil
}
