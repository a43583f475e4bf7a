package bls_test

import (
	"bytes"
	"context"
	"crypto"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"math/big"
	"testing"

	circlbls "github.com/cloudflare/circl/sign/bls"

	"github.com/signerkit/signerkit/bls"
	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/signer/signertest"
)

func TestConformance(t *testing.T) {
	t.Parallel()
	for _, alg := range algs {
		t.Run(alg.String(), func(t *testing.T) {
			t.Parallel()
			seed := make([]byte, 32)
			rand.Read(seed)
			signertest.Run(t, func() (signer.Signer, error) {
				return bls.FromSeed(seed, alg)
			}, signertest.Options{})
		})
	}
}

// TestCircl checks blst against circl both ways: every signature that
// package bls makes verifies under circl, every signature circl makes from
// the same scalar verifies under package bls, and the two are the same
// bytes (BLS signatures are deterministic), with each scheme's DST and the
// proof-of-possession scheme's.
func TestCircl(t *testing.T) {
	t.Parallel()
	for _, alg := range algs {
		t.Run(alg.String(), func(t *testing.T) {
			t.Parallel()
			for i := range 2 {
				ikm := make([]byte, 32+i)
				rand.Read(ikm)
				s, err := bls.FromSeed(ikm, alg)
				if err != nil {
					t.Fatal(err)
				}
				sk, err := s.SecretKey()
				if err != nil {
					t.Fatal(err)
				}
				if got, want := s.PublicKey().Bytes(), circlPublic(alg, sk); !bytes.Equal(got, want) {
					t.Fatalf("public key %x, circl computes %x", got, want)
				}
				popDST := []byte(bls.DSTMinPKPoP)
				if alg == signer.BLS12381MinSig {
					popDST = []byte(bls.DSTMinSigPoP)
				}
				for _, size := range []int{0, 1, 32, 100, 1024, 64 << 10} {
					msg := make([]byte, size)
					rand.Read(msg)
					sig, err := s.SignContext(context.Background(), msg)
					if err != nil {
						t.Fatal(err)
					}
					if len(sig) != bls.SignatureSize(alg) {
						t.Fatalf("signature is %d bytes, want %d", len(sig), bls.SignatureSize(alg))
					}
					for _, pub := range [][]byte{s.PublicKey().Bytes(), s.PublicKey().Compressed()} {
						if err := signertest.VerifyBLS(alg, pub, msg, sig, nil); err != nil {
							t.Fatalf("%d-byte message: circl: %v", size, err)
						}
					}
					theirs := circlSign(alg, sk, msg, []byte(bls.DST(alg)))
					if !bytes.Equal(theirs, sig) {
						t.Fatalf("%d-byte message: blst signed %x, circl %x", size, sig, theirs)
					}
					if err := s.PublicKey().VerifySignature(msg, theirs); err != nil {
						t.Fatalf("circl's signature: %v", err)
					}
					if err := alg.Verify(s.Public(), msg, theirs); err != nil {
						t.Fatalf("signer.Verify of circl's signature: %v", err)
					}
					// The PoP scheme's DST.
					sigPoP, err := s.SignDST(msg, popDST)
					if err != nil {
						t.Fatal(err)
					}
					if err := signertest.VerifyBLS(alg, s.PublicKey().Bytes(), msg, sigPoP, popDST); err != nil {
						t.Fatalf("PoP-scheme signature: circl: %v", err)
					}
					if theirs := circlSign(alg, sk, msg, popDST); !bytes.Equal(theirs, sigPoP) {
						t.Fatalf("PoP scheme: blst signed %x, circl %x", sigPoP, theirs)
					}
					if err := s.PublicKey().VerifyDST(msg, sigPoP, popDST); err != nil {
						t.Fatal(err)
					}
					if s.PublicKey().VerifySignature(msg, sigPoP) == nil {
						t.Fatal("a signature under the PoP scheme's DST verifies under the basic scheme's")
					}
				}
				clear(sk)
				s.Close()
			}
		})
	}
}

// TestCirclSignBLS checks against circl's own sign/bls package (the basic
// scheme, compressed keys), whose KeyGen takes the salt as given: with
// SHA-256 of "BLS-SIG-KEYGEN-SALT-" it is the draft-04 KeyGen that FromSeed
// runs (barring the retry on a zero key, which never happens in practice).
func TestCirclSignBLS(t *testing.T) {
	salt := sha256.Sum256([]byte("BLS-SIG-KEYGEN-SALT-"))
	msg := []byte("signerkit and circl")
	for range 3 {
		ikm := make([]byte, 48)
		rand.Read(ikm)

		ours, err := bls.FromSeed(ikm, signer.BLS12381MinPK)
		if err != nil {
			t.Fatal(err)
		}
		theirs, err := circlbls.KeyGen[circlbls.KeyG1SigG2](ikm, salt[:], nil)
		if err != nil {
			t.Fatal(err)
		}
		a, _ := ours.SecretKey()
		b, _ := theirs.MarshalBinary()
		if !bytes.Equal(a, b) {
			t.Fatalf("KeyGen: blst %x, circl %x", a, b)
		}
		pub, _ := theirs.PublicKey().MarshalBinary()
		if !bytes.Equal(pub, ours.PublicKey().Compressed()) {
			t.Fatalf("public key: circl %x, ours %x", pub, ours.PublicKey().Compressed())
		}
		sig, _ := ours.SignContext(context.Background(), msg)
		if !circlbls.Verify(theirs.PublicKey(), msg, sig) {
			t.Fatal("circl's sign/bls rejects our min-pk signature")
		}
		if err := ours.PublicKey().VerifySignature(msg, circlbls.Sign(theirs, msg)); err != nil {
			t.Fatalf("circl's sign/bls signature: %v", err)
		}

		ours2, _ := bls.FromSeed(ikm, signer.BLS12381MinSig)
		theirs2, _ := circlbls.KeyGen[circlbls.KeyG2SigG1](ikm, salt[:], nil)
		sig, _ = ours2.SignContext(context.Background(), msg)
		if !circlbls.Verify(theirs2.PublicKey(), msg, sig) {
			t.Fatal("circl's sign/bls rejects our min-sig signature")
		}
		if err := ours2.PublicKey().VerifySignature(msg, circlbls.Sign(theirs2, msg)); err != nil {
			t.Fatalf("circl's sign/bls min-sig signature: %v", err)
		}
		ours.Close()
		ours2.Close()
	}
}

// TestVectorsKwantam signs the IETF draft author's basic-scheme vectors.
// Their KeyGen predates draft 4, so circl derives the scalar (salt used
// as it is), and package bls signs with it.
func TestVectorsKwantam(t *testing.T) {
	for _, tc := range []struct {
		file string
		alg  signer.Algorithm
	}{{"kwantam_sig_g2_basic.txt", signer.BLS12381MinPK}, {"kwantam_sig_g1_basic.txt", signer.BLS12381MinSig}} {
		for i, v := range readVectors(t, tc.file) {
			msg, ikm, want := v[0], v[1], v[2]
			var sk []byte
			if tc.alg == signer.BLS12381MinPK {
				k, err := circlbls.KeyGen[circlbls.KeyG1SigG2](ikm, []byte("BLS-SIG-KEYGEN-SALT-"), nil)
				if err != nil {
					t.Fatal(err)
				}
				sk, _ = k.MarshalBinary()
			} else {
				k, err := circlbls.KeyGen[circlbls.KeyG2SigG1](ikm, []byte("BLS-SIG-KEYGEN-SALT-"), nil)
				if err != nil {
					t.Fatal(err)
				}
				sk, _ = k.MarshalBinary()
			}
			s, err := bls.FromSecretKey(sk, tc.alg)
			if err != nil {
				t.Fatal(err)
			}
			got, err := s.SignContext(context.Background(), msg)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s line %d: signature %x, want %x", tc.file, i, got, want)
			}
			if err := s.PublicKey().VerifySignature(msg, want); err != nil {
				t.Errorf("%s line %d: %v", tc.file, i, err)
			}
			s.Close()
		}
	}
}

// TestVectorsEthereum runs the sign cases of ethereum/bls12-381-tests.
func TestVectorsEthereum(t *testing.T) {
	for i, v := range readVectors(t, "eth_sign.txt") {
		sk, msg, want := v[0], v[1], v[2]
		s, err := bls.FromSecretKey(sk, signer.BLS12381MinPK)
		if err != nil {
			t.Fatal(err)
		}
		got, err := s.SignDST(msg, []byte(bls.DSTMinPKPoP))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("case %d: signature %x, want %x", i, got, want)
		}
		if err := s.PublicKey().VerifyDST(msg, want, []byte(bls.DSTMinPKPoP)); err != nil {
			t.Errorf("case %d: %v", i, err)
		}
		if err := signertest.VerifyBLS(signer.BLS12381MinPK, s.PublicKey().Compressed(), msg, want, []byte(bls.DSTMinPKPoP)); err != nil {
			t.Errorf("case %d: circl: %v", i, err)
		}
		s.Close()
	}
	// The case whose output is null: the zero private key.
	if _, err := bls.FromSecretKey(make([]byte, 32), signer.BLS12381MinPK); !errors.Is(err, signer.ErrInvalidKey) {
		t.Errorf("FromSecretKey(zero) = %v, want ErrInvalidKey", err)
	}
}

func TestSecretKeyRange(t *testing.T) {
	rMinus1 := new(big.Int).Sub(orderR, big.NewInt(1)).FillBytes(make([]byte, 32))
	for _, alg := range algs {
		for _, tc := range []struct {
			name string
			b    []byte
			ok   bool
		}{
			{"one", big.NewInt(1).FillBytes(make([]byte, 32)), true},
			{"r-1", rMinus1, true},
			{"zero", make([]byte, 32), false},
			{"r", orderR.FillBytes(make([]byte, 32)), false},
			{"r+1", new(big.Int).Add(orderR, big.NewInt(1)).FillBytes(make([]byte, 32)), false},
			{"all ones", bytes.Repeat([]byte{0xff}, 32), false},
			{"31 bytes", rMinus1[1:], false},
			{"33 bytes", append([]byte{0}, rMinus1...), false},
			{"empty", nil, false},
		} {
			s, err := bls.FromSecretKey(tc.b, alg)
			if tc.ok != (err == nil) {
				t.Errorf("%v FromSecretKey(%s) = %v", alg, tc.name, err)
			}
			if err != nil && !errors.Is(err, signer.ErrInvalidKey) {
				t.Errorf("%v FromSecretKey(%s) error %v does not wrap ErrInvalidKey", alg, tc.name, err)
			}
			if err == nil {
				got, _ := s.SecretKey()
				if !bytes.Equal(got, tc.b) {
					t.Errorf("%v SecretKey() = %x, want %x", alg, got, tc.b)
				}
				if !bytes.Equal(s.PublicKey().Bytes(), circlPublic(alg, tc.b)) {
					t.Errorf("%v %s: public key differs from circl's", alg, tc.name)
				}
				s.Close()
			}
		}
	}
	if _, err := bls.FromSeed(make([]byte, 31), signer.BLS12381MinPK); !errors.Is(err, signer.ErrInvalidKey) {
		t.Errorf("FromSeed(31 bytes) = %v, want ErrInvalidKey", err)
	}
	for _, alg := range []signer.Algorithm{0, signer.Ed25519, signer.RSAPSS, 200} {
		if _, err := bls.FromSeed(make([]byte, 32), alg); !errors.Is(err, signer.ErrUnsupported) {
			t.Errorf("FromSeed(alg %v) = %v, want ErrUnsupported", alg, err)
		}
		if _, err := bls.ParsePublicKey(make([]byte, 96), alg); !errors.Is(err, signer.ErrUnsupported) {
			t.Errorf("ParsePublicKey(alg %v) = %v, want ErrUnsupported", alg, err)
		}
	}
}

func TestCometBFTSecret(t *testing.T) {
	for _, secret := range [][]byte{nil, []byte("short"), bytes.Repeat([]byte{7}, 32), bytes.Repeat([]byte{9}, 64)} {
		ikm := secret
		if len(secret) != 32 {
			h := sha256.Sum256(secret)
			ikm = h[:]
		}
		a, err := bls.FromCometBFTSecret(secret, signer.BLS12381MinPK)
		if err != nil {
			t.Fatal(err)
		}
		b, err := bls.FromSeed(ikm, signer.BLS12381MinPK)
		if err != nil {
			t.Fatal(err)
		}
		if !a.PublicKey().Equal(b.PublicKey()) {
			t.Errorf("%d-byte secret: FromCometBFTSecret differs from FromSeed on its IKM", len(secret))
		}
	}
}

func TestSignOpts(t *testing.T) {
	for _, alg := range algs {
		s := mustSeed(t, alg, "sign opts")
		msg := []byte("opts")
		sig, err := s.Sign(nil, msg, crypto.Hash(0))
		if err != nil {
			t.Fatal(err)
		}
		if err := signertest.VerifyBLS(alg, s.PublicKey().Bytes(), msg, sig, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Sign(nil, msg, crypto.SHA256); !errors.Is(err, signer.ErrUnsupported) {
			t.Errorf("Sign with SHA256 = %v, want ErrUnsupported", err)
		}
		if _, err := s.Sign(nil, msg, nil); !errors.Is(err, signer.ErrInvalidMessage) {
			t.Errorf("Sign with nil opts = %v, want ErrInvalidMessage", err)
		}
	}
}

func TestClose(t *testing.T) {
	for _, alg := range algs {
		s := mustSeed(t, alg, "close")
		pub := s.PublicKey()
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		if _, err := s.SignContext(context.Background(), []byte("x")); !errors.Is(err, signer.ErrClosed) {
			t.Errorf("SignContext after Close = %v", err)
		}
		if _, err := s.SecretKey(); !errors.Is(err, signer.ErrClosed) {
			t.Errorf("SecretKey after Close = %v", err)
		}
		if _, err := s.PopProve(); !errors.Is(err, signer.ErrClosed) {
			t.Errorf("PopProve after Close = %v", err)
		}
		if !bytes.Equal(bls.SecretBytesForTest(s), make([]byte, 32)) {
			t.Error("Close left the secret scalar in the Signer")
		}
		if !s.PublicKey().Equal(pub) {
			t.Error("Public changed at Close")
		}
	}
}

func TestPoP(t *testing.T) {
	for _, alg := range algs {
		a, b := mustSeed(t, alg, "pop a"), mustSeed(t, alg, "pop b")
		proof, err := a.PopProve()
		if err != nil {
			t.Fatal(err)
		}
		if err := bls.PopVerify(a.PublicKey(), proof); err != nil {
			t.Fatalf("%v: PopVerify of a's proof: %v", alg, err)
		}
		popDST := []byte(bls.PopDSTMinPK)
		if alg == signer.BLS12381MinSig {
			popDST = []byte(bls.PopDSTMinSig)
		}
		if err := signertest.VerifyBLS(alg, a.PublicKey().Bytes(), a.PublicKey().Compressed(), proof, popDST); err != nil {
			t.Fatalf("%v: circl on the proof: %v", alg, err)
		}
		if err := bls.PopVerify(b.PublicKey(), proof); !errors.Is(err, signer.ErrInvalidSignature) {
			t.Errorf("%v: a's proof for b's key = %v", alg, err)
		}
		// A plain signature of the key's bytes is not a proof.
		sig, _ := a.SignContext(context.Background(), a.PublicKey().Compressed())
		if err := bls.PopVerify(a.PublicKey(), sig); !errors.Is(err, signer.ErrInvalidSignature) {
			t.Errorf("%v: a basic-scheme signature passes as a proof: %v", alg, err)
		}
		if err := a.PublicKey().VerifySignature(a.PublicKey().Compressed(), proof); err == nil {
			t.Errorf("%v: a proof passes as a basic-scheme signature", alg)
		}
		if err := bls.PopVerify(nil, proof); !errors.Is(err, signer.ErrInvalidSignature) {
			t.Errorf("PopVerify(nil) = %v", err)
		}
	}
}
