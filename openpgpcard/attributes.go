package openpgpcard

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdh"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"encoding/binary"
	"fmt"
	"math/big"

	"github.com/signerkit/signerkit/internal/eckey"
	"github.com/signerkit/signerkit/openpgpcard/internal/iso7816"
	"github.com/signerkit/signerkit/signer"
)

// Attributes are a key's algorithm attributes (data objects C1–C3,
// OpenPGP card specification v3.4 section 4.4.3.9).
type Attributes struct {
	// ID is the algorithm id: 0x01 RSA, 0x12 ECDH, 0x13 ECDSA, 0x16 EdDSA.
	ID byte
	// RSABits is the modulus size of an RSA key.
	RSABits int
	// OID is the curve's object identifier, DER contents, for ECC keys.
	OID string
}

// Curve OIDs.
var (
	oidP256    = string([]byte{0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x03, 0x01, 0x07})
	oidEd25519 = string([]byte{0x2B, 0x06, 0x01, 0x04, 0x01, 0xDA, 0x47, 0x0F, 0x01})
	oidX25519  = string([]byte{0x2B, 0x06, 0x01, 0x04, 0x01, 0x97, 0x55, 0x01, 0x05, 0x01})
)

// String names the attributes: rsa2048, ecdsa-p256, ed25519, ecdh-p256,
// cv25519, or the raw id.
func (a Attributes) String() string {
	switch {
	case a.ID == 0x01:
		return fmt.Sprintf("rsa%d", a.RSABits)
	case a.ID == 0x13 && a.OID == oidP256:
		return "ecdsa-p256"
	case a.ID == 0x16 && a.OID == oidEd25519:
		return "ed25519"
	case a.ID == 0x12 && a.OID == oidP256:
		return "ecdh-p256"
	case a.ID == 0x12 && a.OID == oidX25519:
		return "cv25519"
	}
	return fmt.Sprintf("algorithm %#02x oid %x", a.ID, a.OID)
}

// parseAttributes decodes C1–C3.
func parseAttributes(b []byte) (Attributes, error) {
	if len(b) == 0 {
		return Attributes{}, fmt.Errorf("openpgpcard: empty algorithm attributes: %w", signer.ErrProtocol)
	}
	if b[0] == 0x01 {
		if len(b) < 5 {
			return Attributes{}, fmt.Errorf("openpgpcard: RSA attributes of %d bytes: %w", len(b), signer.ErrProtocol)
		}
		return Attributes{ID: 0x01, RSABits: int(binary.BigEndian.Uint16(b[1:3]))}, nil
	}
	oid := b[1:]
	if n := len(oid); n > 0 && (oid[n-1] == 0x00 || oid[n-1] == 0xFF) && string(oid) != oidEd25519 && string(oid) != oidX25519 {
		oid = oid[:n-1] // the import-format byte
	}
	return Attributes{ID: b[0], OID: string(oid)}, nil
}

// Bytes encodes the attributes as PUT DATA takes them.
func (a Attributes) Bytes() []byte {
	if a.ID == 0x01 {
		return []byte{0x01, byte(a.RSABits >> 8), byte(a.RSABits), 0x00, 0x20, 0x00}
	}
	return append([]byte{a.ID}, a.OID...)
}

// The attributes of the algorithms this package uses.
var (
	AttrRSA2048   = Attributes{ID: 0x01, RSABits: 2048}
	AttrRSA4096   = Attributes{ID: 0x01, RSABits: 4096}
	AttrECDSAP256 = Attributes{ID: 0x13, OID: oidP256}
	AttrEd25519   = Attributes{ID: 0x16, OID: oidEd25519}
	AttrECDHP256  = Attributes{ID: 0x12, OID: oidP256}
	AttrX25519    = Attributes{ID: 0x12, OID: oidX25519}
)

// signerAlgorithm is the signer.Algorithm of a signing key, 0 for ECDH.
func (a Attributes) signerAlgorithm() signer.Algorithm {
	switch {
	case a.ID == 0x01:
		return signer.RSAPKCS1v15
	case a == AttrECDSAP256:
		return signer.ECDSAP256
	case a == AttrEd25519:
		return signer.Ed25519
	}
	return 0
}

// parsePublic decodes a public key template 7F49 for these attributes.
func (a Attributes) parsePublic(resp []byte) (crypto.PublicKey, error) {
	tmpl, ok := iso7816.Find(resp, 0x7F49)
	if !ok {
		return nil, fmt.Errorf("openpgpcard: no public key template 7F49 in the reply: %w", signer.ErrProtocol)
	}
	if a.ID == 0x01 {
		n, ok1 := iso7816.Find(tmpl, 0x81)
		e, ok2 := iso7816.Find(tmpl, 0x82)
		if !ok1 || !ok2 || len(e) == 0 || len(e) > 4 {
			return nil, fmt.Errorf("openpgpcard: RSA public key without modulus or exponent: %w", signer.ErrProtocol)
		}
		pub := &rsa.PublicKey{N: new(big.Int).SetBytes(n), E: int(new(big.Int).SetBytes(e).Int64())}
		if pub.N.BitLen() != a.RSABits || pub.E < 3 || pub.E%2 == 0 {
			return nil, fmt.Errorf("openpgpcard: %d-bit RSA key with exponent %d under %v attributes: %w", pub.N.BitLen(), pub.E, a, signer.ErrProtocol)
		}
		return pub, nil
	}
	point, ok := iso7816.Find(tmpl, 0x86)
	if !ok {
		return nil, fmt.Errorf("openpgpcard: EC public key without point 86: %w", signer.ErrProtocol)
	}
	return a.parsePoint(point)
}

func (a Attributes) parsePoint(point []byte) (crypto.PublicKey, error) {
	bad := func(err error) error {
		return fmt.Errorf("openpgpcard: %v public key: %v: %w", a, err, signer.ErrProtocol)
	}
	switch a {
	case AttrEd25519:
		if err := signer.CheckEd25519PublicKey(point); err != nil {
			return nil, bad(err)
		}
		return ed25519.PublicKey(bytes.Clone(point)), nil
	case AttrECDSAP256:
		pub, err := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), point)
		if err != nil {
			return nil, bad(err)
		}
		return pub, nil
	case AttrECDHP256:
		pub, err := ecdh.P256().NewPublicKey(point)
		if err != nil {
			return nil, bad(err)
		}
		return pub, nil
	case AttrX25519:
		pub, err := ecdh.X25519().NewPublicKey(point)
		if err != nil {
			return nil, bad(err)
		}
		return pub, nil
	}
	return nil, fmt.Errorf("openpgpcard: %v keys: %w", a, signer.ErrUnsupported)
}

func clonePublic(p crypto.PublicKey) crypto.PublicKey {
	switch k := p.(type) {
	case ed25519.PublicKey:
		return ed25519.PublicKey(bytes.Clone(k))
	case *rsa.PublicKey:
		return &rsa.PublicKey{N: new(big.Int).Set(k.N), E: k.E}
	case *ecdsa.PublicKey:
		return eckey.Clone(k)
	}
	return p // *ecdh.PublicKey is immutable
}

// cardInfo is what connect reads from the application related data.
type cardInfo struct {
	attrs    [3]Attributes
	pw1Multi bool
}

// connect dials, selects the application and reads its capabilities and
// key attributes.
func connect(ctx context.Context, dial Dialer) (*link, cardInfo, error) {
	tr, err := dial(ctx)
	if err != nil {
		return nil, cardInfo{}, wrapDial(err)
	}
	l := &link{tr: tr}
	info, err := l.handshake(ctx)
	if err != nil {
		tr.Close()
		return nil, cardInfo{}, err
	}
	return l, info, nil
}

// applicationID is the OpenPGP application's RID and PIX prefix.
var applicationID = []byte{0xD2, 0x76, 0x00, 0x01, 0x24, 0x01}

func (l *link) handshake(ctx context.Context) (cardInfo, error) {
	var info cardInfo
	_, err := l.transmit(ctx, "SELECT", iso7816.Command{INS: 0xA4, P1: 0x04, Data: applicationID})
	if se, ok := err.(*StatusError); ok && (se.SW == iso7816.SWFileNotFound || se.SW == iso7816.SWINSNotSupported) {
		return info, fmt.Errorf("openpgpcard: the card has no OpenPGP application (SELECT: %04x): %w", se.SW, signer.ErrAppNotOpen)
	}
	if err != nil {
		return info, err
	}
	ard, err := l.transmit(ctx, "GET DATA 6E", iso7816.Command{INS: 0xCA, P1: 0x00, P2: 0x6E})
	if err != nil {
		return info, err
	}
	if hist, ok := iso7816.Find(ard, 0x5F52); ok {
		l.chaining, l.extended = cardCapabilities(hist)
	}
	l.maxCmd = 255
	if el, ok := iso7816.Find(ard, 0x7F66); ok && l.extended {
		if objs, err := iso7816.ParseTLV(el); err == nil && len(objs) >= 1 && len(objs[0].Value) == 2 {
			l.maxCmd = max(255, int(binary.BigEndian.Uint16(objs[0].Value))-16) // room for the header
		}
	}
	for i := range info.attrs {
		v, ok := iso7816.Find(ard, uint16(0xC1+i))
		if !ok {
			return info, fmt.Errorf("openpgpcard: application related data without attributes C%d: %w", i+1, signer.ErrProtocol)
		}
		if info.attrs[i], err = parseAttributes(v); err != nil {
			return info, err
		}
	}
	if pw, ok := iso7816.Find(ard, 0xC4); ok && len(pw) > 0 {
		info.pw1Multi = pw[0] == 0x01
	}
	return info, nil
}

// cardCapabilities reads command chaining and extended Lc/Le from the
// historical bytes' card capabilities (compact-TLV tag 7, third byte).
func cardCapabilities(hist []byte) (chaining, extended bool) {
	if len(hist) < 1 || hist[0] != 0x00 {
		return false, false
	}
	b := hist[1:]
	if len(b) >= 3 {
		b = b[:len(b)-3] // status indicator
	}
	for len(b) > 0 {
		tag, n := b[0]>>4, int(b[0]&0x0F)
		if len(b) < 1+n {
			return false, false
		}
		if tag == 7 && n >= 3 {
			return b[3]&0x80 != 0, b[3]&0x40 != 0
		}
		b = b[1+n:]
	}
	return false, false
}
