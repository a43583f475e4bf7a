package cardsim

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"math/big"

	"github.com/signerkit/signerkit/openpgpcard/internal/iso7816"
)

// importKey is PUT DATA with the odd instruction (DB) and P1-P2 3FFF: key
// import by extended header list (OpenPGP card specification 4.4.3.12 and
// 7.2.8). The data is 4D holding a control reference template (B6, B8 or
// A4: which key), the cardholder private key template 7F48 (tags and
// lengths: 91 e, 92 p, 93 q for RSA in the standard format, and 94 u,
// 95 dp, 96 dq, 97 n in the others; 92 the private scalar and 99 the
// public point, optional, for ECC) and 5F48, the values in that order.
// The key must fit the slot's attributes; a new key clears the slot's
// fingerprint and date, which the host writes next. Import of a
// Curve25519 ECDH key is not simulated: 6A81.
func (c *Card) importKey(cmd iso7816.Command) uint16 {
	if cmd.P1 != 0x3F || cmd.P2 != 0xFF {
		return iso7816.SWWrongP1P2
	}
	s, parts, code := parseImport(cmd.Data)
	if code != iso7816.SWOK {
		return code
	}
	k, code := keyFromParts(c.attrs[s], parts)
	if code != iso7816.SWOK {
		return code
	}
	if s == SlotDecrypt && !k.alg.deciphers() || s != SlotDecrypt && !k.alg.signs() {
		return iso7816.SWIncorrectData
	}
	c.keys[s] = k
	c.fprs[s], c.times[s] = [20]byte{}, 0
	if s == SlotSign {
		c.dsCount = 0
	}
	return iso7816.SWOK
}

// parseImport splits an extended header list into the slot and the key's
// values by tag.
func parseImport(data []byte) (Slot, map[uint16][]byte, uint16) {
	outer, err := iso7816.ParseTLV(data)
	if err != nil || len(outer) != 1 || outer[0].Tag != 0x4D {
		return 0, nil, iso7816.SWIncorrectData
	}
	objs, err := iso7816.ParseTLV(outer[0].Value)
	if err != nil || len(objs) != 3 || objs[1].Tag != 0x7F48 || objs[2].Tag != 0x5F48 {
		return 0, nil, iso7816.SWIncorrectData
	}
	s, ok := slotOfCRT(byte(objs[0].Tag))
	if !ok || objs[0].Tag > 0xFF {
		return 0, nil, iso7816.SWIncorrectData
	}
	list, err := iso7816.ParseHeaderList(objs[1].Value)
	if err != nil {
		return 0, nil, iso7816.SWIncorrectData
	}
	values, parts := objs[2].Value, map[uint16][]byte{}
	for _, e := range list {
		if e.Len > len(values) || parts[e.Tag] != nil {
			return 0, nil, iso7816.SWIncorrectData
		}
		parts[e.Tag], values = values[:e.Len], values[e.Len:]
	}
	if len(values) != 0 {
		return 0, nil, iso7816.SWIncorrectData
	}
	return s, parts, iso7816.SWOK
}

// keyFromParts makes the key the slot's attributes a call for from the
// imported values.
func keyFromParts(a Algorithm, parts map[uint16][]byte) (*key, uint16) {
	k := &key{alg: a, source: 2}
	switch a {
	case RSA2048, RSA4096:
		e, p, q := new(big.Int).SetBytes(parts[0x91]), new(big.Int).SetBytes(parts[0x92]), new(big.Int).SetBytes(parts[0x93])
		bits := map[Algorithm]int{RSA2048: 2048, RSA4096: 4096}[a]
		if !e.IsInt64() || e.Int64() < 3 || e.Int64() > 1<<31-1 || p.BitLen() != bits/2 || q.BitLen() != bits/2 {
			return nil, iso7816.SWIncorrectData
		}
		n := new(big.Int).Mul(p, q)
		if n.BitLen() != bits || parts[0x97] != nil && new(big.Int).SetBytes(parts[0x97]).Cmp(n) != 0 {
			return nil, iso7816.SWIncorrectData
		}
		phi := new(big.Int).Mul(new(big.Int).Sub(p, big.NewInt(1)), new(big.Int).Sub(q, big.NewInt(1)))
		d := new(big.Int).ModInverse(e, phi)
		if d == nil {
			return nil, iso7816.SWIncorrectData
		}
		priv := &rsa.PrivateKey{PublicKey: rsa.PublicKey{N: n, E: int(e.Int64())}, D: d, Primes: []*big.Int{p, q}}
		if priv.Validate() != nil {
			return nil, iso7816.SWIncorrectData
		}
		priv.Precompute()
		k.rsa = priv
	case EdDSA25519:
		if len(parts[0x92]) != ed25519.SeedSize {
			return nil, iso7816.SWIncorrectData
		}
		k.ed = ed25519.NewKeyFromSeed(parts[0x92])
	case ECDSAP256, ECDHP256:
		d := parts[0x92]
		if len(d) == 0 || len(d) > 32 {
			return nil, iso7816.SWIncorrectData
		}
		priv, err := ecdsa.ParseRawPrivateKey(elliptic.P256(), append(make([]byte, 32-len(d)), d...))
		if err != nil {
			return nil, iso7816.SWIncorrectData
		}
		if k.ecdsa = priv; a == ECDHP256 {
			if k.ecdh, err = priv.ECDH(); err != nil {
				return nil, iso7816.SWIncorrectData
			}
			k.ecdsa = nil
		}
	default:
		return nil, iso7816.SWFuncNotSupported
	}
	return k, iso7816.SWOK
}
