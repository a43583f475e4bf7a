package yubihsm

import (
	"context"
	"crypto"
	"crypto/rsa"
	"encoding/binary"
	"fmt"

	"github.com/certusone/yubihsm-go/commands"

	"github.com/signerkit/signerkit/signer"
)

// RSA and ECDSA signing over a digest, for SignContext and Sign.

// signECDSADigest is Sign for ECDSA: the digest cut or left-padded to the
// curve's size (ECDSA takes the leftmost bits of a longer hash; a shorter
// one is its value as an integer, which zeros on the left keep), signed on
// the device and returned in DER, with S lowered on secp256k1.
func (k *Signer) signECDSADigest(ctx context.Context, digest []byte) ([]byte, error) {
	size := (k.alg.Curve().Params().N.BitLen() + 7) / 8
	d := make([]byte, size)
	if len(digest) >= size {
		copy(d, digest[:size])
	} else {
		copy(d[size-len(digest):], digest)
	}
	der, err := k.signECDSA(ctx, d)
	if err != nil {
		return nil, err
	}
	raw, err := signer.ECDSAToRaw(k.alg, der)
	if err != nil {
		return nil, fmt.Errorf("yubihsm: sign with %04x: the device's signature: %w", k.id, err)
	}
	return signer.ECDSAToASN1(k.alg, raw)
}

// mgf1 is the device's MGF1 algorithm for each hash an RSA digest may be
// of.
var mgf1 = map[crypto.Hash]commands.Algorithm{
	crypto.SHA256: commands.AlgorithmRSAMGF1SHA256,
	crypto.SHA384: commands.AlgorithmRSAMGF1SHA384,
	crypto.SHA512: commands.AlgorithmRSAMGF1SHA512,
}

// signRSAOpts is Sign for RSA keys.
func (k *Signer) signRSAOpts(ctx context.Context, digest []byte, opts crypto.SignerOpts) ([]byte, error) {
	h := opts.HashFunc()
	if _, ok := mgf1[h]; !ok {
		// The device tells the hash by the digest's length: a 32-byte
		// SHA3-256 digest would be signed as SHA-256.
		return nil, fmt.Errorf("yubihsm: RSA with %v: the device takes SHA-256, SHA-384 or SHA-512: %w", h, signer.ErrUnsupported)
	}
	o, pss := opts.(*rsa.PSSOptions)
	scheme := signer.RSAPKCS1v15
	if pss {
		scheme = signer.RSAPSS
	}
	if !k.obj.may(scheme) {
		return nil, fmt.Errorf("yubihsm: key %04x may not sign %v: %w", k.id, scheme, signer.ErrUnsupported)
	}
	if !pss {
		return k.signRSA(ctx, false, h, digest, 0)
	}
	salt := o.SaltLength
	if salt == rsa.PSSSaltLengthEqualsHash || salt == rsa.PSSSaltLengthAuto {
		salt = h.Size()
	}
	if salt <= 0 || salt > 0xffff {
		return nil, fmt.Errorf("yubihsm: PSS salt length %d: %w", o.SaltLength, signer.ErrUnsupported)
	}
	return k.signRSA(ctx, true, h, digest, salt)
}

// signRSA signs digest (of hash h) with Sign PKCS1, or Sign PSS with MGF1
// under h and a salt of salt bytes, and checks the signature against the
// key's public key, so that a device that answers garbage is caught here.
func (k *Signer) signRSA(ctx context.Context, pss bool, h crypto.Hash, digest []byte, salt int) ([]byte, error) {
	pub := k.pub.(*rsa.PublicKey)
	var sig []byte
	if pss {
		data := binary.BigEndian.AppendUint16(nil, k.id)
		data = append(data, byte(mgf1[h]))
		data = binary.BigEndian.AppendUint16(data, uint16(salt))
		data = append(data, digest...)
		resp, err := k.pool.do(ctx, func() (*commands.CommandMessage, error) {
			return &commands.CommandMessage{CommandType: commands.CommandTypeSignDataPss, Data: data}, nil
		})
		if err != nil {
			return nil, wrap(err, "sign with %04x", k.id)
		}
		r, ok := resp.(*rawResponse)
		if !ok {
			return nil, &protocolError{fmt.Sprintf("Sign PSS answered %T", resp)}
		}
		sig = r.data
		err = rsa.VerifyPSS(pub, h, digest, sig, &rsa.PSSOptions{SaltLength: salt, Hash: h})
		if err != nil {
			return nil, &protocolError{fmt.Sprintf("Sign PSS with %04x: the device's signature does not verify", k.id)}
		}
		return sig, nil
	}
	resp, err := k.pool.do(ctx, func() (*commands.CommandMessage, error) {
		return commands.CreateSignDataPkcs1Command(k.id, digest)
	})
	if err != nil {
		return nil, wrap(err, "sign with %04x", k.id)
	}
	r, ok := resp.(*commands.SignDataPkcs1Response)
	if !ok {
		return nil, &protocolError{fmt.Sprintf("Sign PKCS1 answered %T", resp)}
	}
	if err := rsa.VerifyPKCS1v15(pub, h, digest, r.Signature); err != nil {
		return nil, &protocolError{fmt.Sprintf("Sign PKCS1 with %04x: the device's signature does not verify", k.id)}
	}
	return r.Signature, nil
}
