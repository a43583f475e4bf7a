package signertest

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/asn1"
	"errors"
	"fmt"
	"math/big"

	"github.com/signerkit/signerkit/internal/refsecp256k1"
	"github.com/signerkit/signerkit/signer"
)

// VerifyStd checks sig, in the form SignContext returns for alg, over msg
// under pub using only the standard library (crypto/ed25519, crypto/ecdsa,
// crypto/rsa), independently of signer's own Verify. For secp256k1 the
// standard library's generic ECDSA verification runs on the curve that
// signer.Secp256k1 returns (decred's arithmetic), so the signature is also
// checked by a textbook implementation that shares no code with it; S must
// be low.
func VerifyStd(alg signer.Algorithm, pub crypto.PublicKey, msg, sig []byte) error {
	bad := func(why string) error { return fmt.Errorf("signertest: %v signature %s", alg, why) }
	if !alg.Valid() {
		return fmt.Errorf("signertest: unknown algorithm %v", alg)
	}
	if err := alg.CheckKey(pub); err != nil {
		return fmt.Errorf("signertest: public key is %T, not a valid %v key", pub, alg)
	}
	switch alg {
	case signer.Ed25519:
		k, ok := pub.(ed25519.PublicKey)
		if !ok {
			return fmt.Errorf("signertest: public key is %T, not ed25519.PublicKey", pub)
		}
		if len(sig) != ed25519.SignatureSize {
			return bad(fmt.Sprintf("is %d bytes, want %d", len(sig), ed25519.SignatureSize))
		}
		if !ed25519.Verify(k, msg, sig) {
			return bad("does not verify with crypto/ed25519")
		}
		return nil
	case signer.ECDSAP256, signer.ECDSAP384, signer.ECDSASecp256k1:
		k, ok := pub.(*ecdsa.PublicKey)
		if !ok {
			return fmt.Errorf("signertest: public key is %T, not *ecdsa.PublicKey", pub)
		}
		size := (alg.Curve().Params().BitSize + 7) / 8
		if len(sig) != 2*size {
			return bad(fmt.Sprintf("is %d bytes, want r‖s of %d", len(sig), 2*size))
		}
		r, s := new(big.Int).SetBytes(sig[:size]), new(big.Int).SetBytes(sig[size:])
		if alg == signer.ECDSASecp256k1 && !lowS(k, s) {
			return bad("has a high S (secp256k1 signatures must be low-S)")
		}
		if !ecdsa.Verify(k, digest(alg, msg), r, s) {
			return bad("does not verify with crypto/ecdsa")
		}
		// crypto/ecdsa runs on decred's secp256k1 arithmetic there; check
		// once more with a textbook implementation that shares no code.
		if alg == signer.ECDSASecp256k1 && !refsecp256k1.Verify(k.X, k.Y, digest(alg, msg), r, s) {
			return bad("does not verify with the reference secp256k1")
		}
		return nil
	case signer.RSAPKCS1v15, signer.RSAPSS:
		k, ok := pub.(*rsa.PublicKey)
		if !ok {
			return fmt.Errorf("signertest: public key is %T, not *rsa.PublicKey", pub)
		}
		if len(sig) != k.Size() {
			return bad(fmt.Sprintf("is %d bytes, want the modulus size %d", len(sig), k.Size()))
		}
		var err error
		if alg == signer.RSAPSS {
			err = rsa.VerifyPSS(k, crypto.SHA256, digest(alg, msg), sig, &rsa.PSSOptions{SaltLength: sha256.Size})
		} else {
			err = rsa.VerifyPKCS1v15(k, crypto.SHA256, digest(alg, msg), sig)
		}
		if err != nil {
			return bad("does not verify with crypto/rsa: " + err.Error())
		}
		return nil
	}
	return fmt.Errorf("signertest: unknown algorithm %v", alg)
}

// verifySignerOpts checks a crypto.Signer.Sign result made with opts over
// digest (the message itself for pure Ed25519) with the standard library.
func verifySignerOpts(alg signer.Algorithm, pub crypto.PublicKey, digest, sig []byte, opts crypto.SignerOpts) error {
	switch k := pub.(type) {
	case ed25519.PublicKey:
		o := &ed25519.Options{Hash: opts.HashFunc()}
		if eo, ok := opts.(*ed25519.Options); ok {
			o = eo
		}
		return ed25519.VerifyWithOptions(k, digest, sig, o)
	case *ecdsa.PublicKey:
		if !ecdsa.VerifyASN1(k, digest, sig) {
			return errors.New("ASN.1 ECDSA signature does not verify with crypto/ecdsa")
		}
		if alg == signer.ECDSASecp256k1 {
			var v struct{ R, S *big.Int }
			if _, err := asn1.Unmarshal(sig, &v); err != nil || !lowS(k, v.S) {
				return errors.New("secp256k1 ASN.1 signature has a high S")
			}
		}
		return nil
	case *rsa.PublicKey:
		if pss, ok := opts.(*rsa.PSSOptions); ok {
			// Verify with the salt length that was asked for, not any.
			want := &rsa.PSSOptions{SaltLength: pss.SaltLength, Hash: pss.Hash}
			if pss.SaltLength == rsa.PSSSaltLengthEqualsHash {
				want.SaltLength = pss.Hash.Size()
			}
			return rsa.VerifyPSS(k, pss.Hash, digest, sig, want)
		}
		return rsa.VerifyPKCS1v15(k, opts.HashFunc(), digest, sig)
	}
	return fmt.Errorf("unknown public key type %T", pub)
}

func lowS(k *ecdsa.PublicKey, s *big.Int) bool {
	half := new(big.Int).Rsh(k.Curve.Params().N, 1)
	return s.Cmp(half) <= 0
}

func digest(alg signer.Algorithm, msg []byte) []byte {
	switch alg.Hash() {
	case crypto.SHA256:
		d := sha256.Sum256(msg)
		return d[:]
	case crypto.SHA384:
		d := sha512.Sum384(msg)
		return d[:]
	}
	return msg
}
