package bls_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"

	circlbls "github.com/cloudflare/circl/sign/bls"

	"github.com/signerkit/signerkit/bls"
	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/signer/signertest"
)

func TestAggregate(t *testing.T) {
	for _, alg := range algs {
		t.Run(alg.String(), func(t *testing.T) {
			t.Parallel()
			const n = 6
			var keys []*bls.PublicKey
			var same, distinct [][]byte
			var msgs [][]byte
			one := []byte("one message for all")
			for i := range n {
				s := mustSeed(t, alg, fmt.Sprintf("aggregate %d", i))
				keys = append(keys, s.PublicKey())
				sig, _ := s.SignContext(context.Background(), one)
				same = append(same, sig)
				m := []byte(fmt.Sprintf("message %d", i))
				msgs = append(msgs, m)
				sig, _ = s.SignContext(context.Background(), m)
				distinct = append(distinct, sig)
			}
			aggSame, err := bls.AggregateSignatures(same, alg)
			if err != nil {
				t.Fatal(err)
			}
			aggDistinct, err := bls.AggregateSignatures(distinct, alg)
			if err != nil {
				t.Fatal(err)
			}
			if err := bls.FastAggregateVerify(keys, one, aggSame, nil); err != nil {
				t.Fatalf("FastAggregateVerify: %v", err)
			}
			if err := bls.AggregateVerify(keys, msgs, aggDistinct, nil); err != nil {
				t.Fatalf("AggregateVerify: %v", err)
			}
			circlAggregate(t, alg, keys, one, aggSame, msgs, aggDistinct)

			// Failures.
			wantInvalid := func(what string, err error) {
				t.Helper()
				if !errors.Is(err, signer.ErrInvalidSignature) {
					t.Errorf("%s: %v, want ErrInvalidSignature", what, err)
				}
			}
			wantInvalid("FastAggregateVerify, one key short", bls.FastAggregateVerify(keys[1:], one, aggSame, nil))
			wantInvalid("FastAggregateVerify, other message", bls.FastAggregateVerify(keys, []byte("other"), aggSame, nil))
			wantInvalid("FastAggregateVerify, no keys", bls.FastAggregateVerify(nil, one, aggSame, nil))
			wantInvalid("FastAggregateVerify, PoP DST", bls.FastAggregateVerify(keys, one, aggSame, []byte(bls.DSTMinPKPoP)))
			swapped := append([][]byte{msgs[1], msgs[0]}, msgs[2:]...)
			wantInvalid("AggregateVerify, swapped messages", bls.AggregateVerify(keys, swapped, aggDistinct, nil))
			dup := append([][]byte{msgs[0]}, msgs[:n-1]...)
			wantInvalid("AggregateVerify, repeated message", bls.AggregateVerify(keys, dup, aggDistinct, nil))
			wantInvalid("AggregateVerify, count", bls.AggregateVerify(keys, msgs[1:], aggDistinct, nil))
			wantInvalid("AggregateVerify, same-message aggregate", bls.AggregateVerify(keys, msgs, aggSame, nil))
			wantInvalid("AggregateSignatures of none", errOf(bls.AggregateSignatures(nil, alg)))
			bad := append([][]byte{}, same...)
			bad[2] = bytes.Clone(bad[2])
			bad[2][5] ^= 1
			if _, err := bls.AggregateSignatures(bad, alg); !errors.Is(err, signer.ErrInvalidSignature) {
				// A flipped bit may still be a point of the curve; then the
				// aggregate must fail to verify instead.
				agg, _ := bls.AggregateSignatures(bad, alg)
				wantInvalid("aggregate with a corrupted signature", bls.FastAggregateVerify(keys, one, agg, nil))
			}
			if err := bls.FastAggregateVerify([]*bls.PublicKey{keys[0], nil}, one, aggSame, nil); !errors.Is(err, signer.ErrInvalidKey) {
				t.Errorf("nil key: %v", err)
			}
			other := algs[0]
			if alg == other {
				other = algs[1]
			}
			mixed := []*bls.PublicKey{keys[0], mustSeed(t, other, "mixed").PublicKey()}
			if err := bls.AggregateVerify(mixed, msgs[:2], aggDistinct, nil); !errors.Is(err, signer.ErrInvalidKey) {
				t.Errorf("mixed algorithms: %v", err)
			}
		})
	}
}

func errOf(_ []byte, err error) error { return err }

// circlAggregate checks the aggregates with circl: for one message,
// against the sum of the keys that circl computes; for distinct ones,
// with circl's sign/bls VerifyAggregate on the basic scheme.
func circlAggregate(t *testing.T, alg signer.Algorithm, keys []*bls.PublicKey, one, aggSame []byte, msgs [][]byte, aggDistinct []byte) {
	t.Helper()
	if alg == signer.BLS12381MinPK {
		var pubs []*circlbls.PublicKey[circlbls.KeyG1SigG2]
		for _, k := range keys {
			p := new(circlbls.PublicKey[circlbls.KeyG1SigG2])
			if err := p.UnmarshalBinary(k.Compressed()); err != nil {
				t.Fatal(err)
			}
			pubs = append(pubs, p)
		}
		if !circlbls.VerifyAggregate(pubs, msgs, aggDistinct) {
			t.Error("circl rejects the distinct-message aggregate")
		}
		same := make([][]byte, len(keys))
		for i := range same {
			same[i] = one
		}
		if circlbls.VerifyAggregate(pubs, same, aggSame) {
			t.Error("circl accepts repeated messages")
		}
	} else {
		var pubs []*circlbls.PublicKey[circlbls.KeyG2SigG1]
		for _, k := range keys {
			p := new(circlbls.PublicKey[circlbls.KeyG2SigG1])
			if err := p.UnmarshalBinary(k.Compressed()); err != nil {
				t.Fatal(err)
			}
			pubs = append(pubs, p)
		}
		if !circlbls.VerifyAggregate(pubs, msgs, aggDistinct) {
			t.Error("circl rejects the distinct-message aggregate")
		}
	}
	sum := circlSumKeys(t, alg, keys)
	if err := signertest.VerifyBLS(alg, sum, one, aggSame, nil); err != nil {
		t.Errorf("circl on the one-message aggregate under the summed key: %v", err)
	}
}
