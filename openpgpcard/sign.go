package openpgpcard

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"math/big"

	"github.com/signerkit/signerkit/openpgpcard/internal/iso7816"
	"github.com/signerkit/signerkit/signer"
)

// Sign implements crypto.Signer. Ed25519 signs the whole message
// (opts.HashFunc() 0); ECDSA P-256 signs a digest and returns ASN.1 DER;
// RSA signs a digest with PKCS #1 v1.5 (the card pads it; PSS is refused
// with signer.ErrUnsupported). rand is ignored: the card has its own. The
// signature is verified before it is returned. Sign gives up after
// Config.SignTimeout.
func (s *Signer) Sign(_ io.Reader, digest []byte, opts crypto.SignerOpts) ([]byte, error) {
	if s.alg == 0 {
		return nil, fmt.Errorf("openpgpcard: the %v key (%v) does not sign: %w", s.cfg.Key, s.attr, signer.ErrUnsupported)
	}
	if _, ok := opts.(*rsa.PSSOptions); ok && s.alg.IsRSA() {
		return nil, fmt.Errorf("openpgpcard: RSA PSS: the card pads PKCS #1 v1.5 only: %w", signer.ErrUnsupported)
	}
	if err := signer.CheckSignerOpts(s.alg, digest, opts); err != nil {
		return nil, fmt.Errorf("openpgpcard: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.timeout)
	defer cancel()
	in := digest
	if s.alg.IsRSA() {
		var err error
		if in, err = digestInfo(opts.HashFunc(), digest); err != nil {
			return nil, err
		}
	}
	sig, err := s.sign(ctx, in)
	if err != nil {
		return nil, err
	}
	if s.alg.IsECDSA() {
		if sig, err = signer.ECDSAToASN1(s.alg, sig); err != nil {
			return nil, err
		}
	}
	if !s.verifyDigest(digest, sig, opts.HashFunc()) {
		return nil, fmt.Errorf("openpgpcard: the card's signature does not verify: %w", signer.ErrProtocol)
	}
	return sig, nil
}

// verifyDigest checks a signature Sign is about to return.
func (s *Signer) verifyDigest(digest, sig []byte, h crypto.Hash) bool {
	switch pub := s.pub.(type) {
	case ed25519.PublicKey:
		return ed25519.Verify(pub, digest, sig)
	case *ecdsa.PublicKey:
		return ecdsa.VerifyASN1(pub, digest, sig)
	case *rsa.PublicKey:
		return rsa.VerifyPKCS1v15(pub, h, digest, sig) == nil
	}
	return false
}

// SignContext signs msg whole: Ed25519 over the message, ECDSA P-256 and
// RSA PKCS #1 v1.5 over its SHA-256. It returns the signature in the
// algorithm's wire form (r‖s for ECDSA) after verifying it under the
// public key, so a card that answers garbage is never believed.
func (s *Signer) SignContext(ctx context.Context, msg []byte) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("openpgpcard: %w", err)
	}
	var in []byte
	var d [sha256.Size]byte // the digest, hashed once for the card and the check
	switch {
	case s.alg == signer.Ed25519:
		if len(msg) > MaxEdDSAMessage {
			return nil, fmt.Errorf("openpgpcard: %d-byte message: EdDSA sends the whole message, at most %d bytes: %w", len(msg), MaxEdDSAMessage, signer.ErrMessageTooLarge)
		}
		in = msg
	case s.alg == signer.ECDSAP256:
		d = sha256.Sum256(msg)
		in = d[:]
	case s.alg.IsRSA():
		d = sha256.Sum256(msg)
		in, _ = digestInfo(crypto.SHA256, d[:])
	default:
		return nil, fmt.Errorf("openpgpcard: the %v key (%v) does not sign: %w", s.cfg.Key, s.attr, signer.ErrUnsupported)
	}
	sig, err := s.sign(ctx, in)
	if err != nil {
		return nil, err
	}
	if !s.verifyMessage(msg, d[:], sig) {
		return nil, fmt.Errorf("openpgpcard: the card's %v signature does not verify: %w", s.alg, signer.ErrProtocol)
	}
	return sig, nil
}

// verifyMessage checks a signature SignContext is about to return, in the
// algorithm's wire form: Ed25519 over msg, ECDSA and RSA over digest, its
// SHA-256. The public key was checked at open (an Ed25519 point of small
// order or not canonical is refused there), so unlike
// signer.Algorithm.Verify it is not checked again on every sign.
func (s *Signer) verifyMessage(msg, digest, sig []byte) bool {
	switch pub := s.pub.(type) {
	case ed25519.PublicKey:
		return len(sig) == ed25519.SignatureSize && ed25519.Verify(pub, msg, sig)
	case *ecdsa.PublicKey:
		r, t := new(big.Int).SetBytes(sig[:len(sig)/2]), new(big.Int).SetBytes(sig[len(sig)/2:])
		return len(sig) == 64 && ecdsa.Verify(pub, digest, r, t)
	case *rsa.PublicKey:
		return rsa.VerifyPKCS1v15(pub, crypto.SHA256, digest, sig) == nil
	}
	return false
}

// MaxEdDSAMessage is the longest message an Ed25519 key signs: the card
// takes the whole message in one command, chained, and a command's data
// is at most 65535 bytes. ECDSA and RSA send a digest and have no limit.
// Cards may take less; they refuse with 6700, an error wrapping
// signer.ErrInvalidMessage.
const MaxEdDSAMessage = 65535

// sign runs PSO:CDS or INTERNAL AUTHENTICATE on in and checks the
// signature's size.
func (s *Signer) sign(ctx context.Context, in []byte) ([]byte, error) {
	name, cmd := "PSO:CDS", iso7816.Command{INS: 0x2A, P1: 0x9E, P2: 0x9A, Data: in}
	if s.cfg.Key == KeyAuth {
		name, cmd = "INTERNAL AUTHENTICATE", iso7816.Command{INS: 0x88, Data: in}
	}
	resp, err := s.command(ctx, name, cmd)
	if err != nil {
		return nil, err
	}
	if want := s.sigSize(); len(resp) != want {
		return nil, fmt.Errorf("openpgpcard: %s: %d-byte signature, want %d: %w", name, len(resp), want, signer.ErrProtocol)
	}
	return resp, nil
}

// command runs one private-key command under the command slot, verifying
// PW1 first when the card needs it, and notes when the card will want PW1
// again: after each signature when its PW1 status byte is 00, and after
// any 6982.
func (s *Signer) command(ctx context.Context, name string, cmd iso7816.Command) (resp []byte, err error) {
	l, err := s.acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer func() { err = s.release(l, err) }()
	if !s.verified {
		if err := s.verify(ctx, l); err != nil {
			return nil, err
		}
	}
	resp, err = l.transmit(ctx, name, cmd)
	if s.cfg.Key == KeySign && !s.multi {
		s.verified = false
	}
	var se *StatusError
	if errors.As(err, &se) && se.SW == iso7816.SWSecurityNotSatisfied {
		s.verified = false
	}
	return resp, err
}

func (s *Signer) sigSize() int {
	switch s.alg {
	case signer.Ed25519, signer.ECDSAP256:
		return 64
	}
	return s.attr.RSABits / 8
}

// Decrypt implements crypto.Decrypter for the decryption key: for RSA it
// sends ciphertext (PKCS #1 v1.5, as long as the modulus) to PSO:DECIPHER
// and returns the plaintext the card unpads; opts must be nil or
// *rsa.PKCS1v15DecryptOptions without SessionKeyLen. For ECDH it takes the
// peer's public point (uncompressed for P-256, 32 bytes for X25519) and
// returns the shared secret. Other keys refuse with
// signer.ErrUnsupported.
func (s *Signer) Decrypt(_ io.Reader, ciphertext []byte, opts crypto.DecrypterOpts) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), s.timeout)
	defer cancel()
	return s.DecryptContext(ctx, ciphertext, opts)
}

// DecryptContext is Decrypt bounded by ctx.
func (s *Signer) DecryptContext(ctx context.Context, ciphertext []byte, opts crypto.DecrypterOpts) ([]byte, error) {
	if s.cfg.Key != KeyDecrypt {
		return nil, fmt.Errorf("openpgpcard: the %v key does not decipher (use dec): %w", s.cfg.Key, signer.ErrUnsupported)
	}
	var data []byte
	switch s.attr.ID {
	case 0x01:
		//lint:ignore SA1019 crypto.Decrypter callers name PKCS #1 v1.5 with this type, the padding the card removes (OpenPGP card specification 7.2.11)
		if o, ok := opts.(*rsa.PKCS1v15DecryptOptions); opts != nil && (!ok || o.SessionKeyLen != 0) {
			return nil, fmt.Errorf("openpgpcard: decrypt options %T: the card removes PKCS #1 v1.5 padding only: %w", opts, signer.ErrUnsupported)
		}
		if len(ciphertext) != s.attr.RSABits/8 {
			return nil, fmt.Errorf("openpgpcard: %d-byte ciphertext for a %d-bit key: %w", len(ciphertext), s.attr.RSABits, signer.ErrInvalidMessage)
		}
		data = append([]byte{0x00}, ciphertext...)
	case 0x12:
		data = iso7816.TLVBytes(0xA6, iso7816.TLVBytes(0x7F49, iso7816.TLVBytes(0x86, ciphertext)))
	default:
		return nil, fmt.Errorf("openpgpcard: %v keys do not decipher: %w", s.attr, signer.ErrUnsupported)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("openpgpcard: %w", err)
	}
	return s.command(ctx, "PSO:DECIPHER", iso7816.Command{INS: 0x2A, P1: 0x80, P2: 0x86, Data: data})
}

// digestInfo returns the DER DigestInfo of a SHA-2 or SHA-3 digest, what
// the card pads for an RSA signature.
func digestInfo(h crypto.Hash, digest []byte) ([]byte, error) {
	arc := map[crypto.Hash]byte{
		crypto.SHA256: 1, crypto.SHA384: 2, crypto.SHA512: 3, crypto.SHA224: 4,
		crypto.SHA512_224: 5, crypto.SHA512_256: 6,
		crypto.SHA3_224: 7, crypto.SHA3_256: 8, crypto.SHA3_384: 9, crypto.SHA3_512: 10,
	}[h]
	if arc == 0 {
		return nil, fmt.Errorf("openpgpcard: RSA over %v: %w", h, signer.ErrUnsupported)
	}
	if len(digest) != h.Size() {
		return nil, fmt.Errorf("openpgpcard: %d-byte digest for %v: %w", len(digest), h, signer.ErrInvalidMessage)
	}
	oid := []byte{0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, arc}
	alg := append(append([]byte{0x30, byte(len(oid) + 2)}, oid...), 0x05, 0x00)
	body := append(append(alg, 0x04, byte(len(digest))), digest...)
	return append([]byte{0x30, byte(len(body))}, body...), nil
}
