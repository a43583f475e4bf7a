package cardsim

import (
	"bytes"
	"encoding/binary"
	"errors"

	"github.com/signerkit/signerkit/openpgpcard/internal/iso7816"
)

// historical returns the historical bytes (5F52): category 00, card
// capabilities 73 announcing command chaining and (unless ShortOnly)
// extended Lc/Le, life cycle 05 and status 9000.
func (c *Card) historical() []byte {
	caps := byte(0xC0)
	if c.shortOnly {
		caps = 0x80
	}
	return []byte{0x00, 0x73, 0x00, 0x00, caps, 0x05, 0x90, 0x00}
}

// ATR returns the card's answer to reset: T=1, with the historical bytes.
func (c *Card) ATR() []byte {
	h := c.historical()
	b := []byte{0x3B, 0x80 | byte(len(h)), 0x80, 0x01}
	b = append(b, h...)
	var tck byte
	for _, x := range b[1:] {
		tck ^= x
	}
	return append(b, tck)
}

// extendedCapabilities (C0): key import, PW1 status changeable, algorithm
// attributes changeable; GET CHALLENGE up to 256; cardholder certificate
// 2048 bytes; special DOs 255; no PIN block 2, no MSE.
var extendedCapabilities = []byte{0x34, 0x00, 0x01, 0x00, 0x08, 0x00, 0x00, 0xFF, 0x00, 0x00}

// getData is GET DATA (section 7.2.6): P1-P2 the tag.
func (c *Card) getData(cmd iso7816.Command) ([]byte, uint16) {
	tag := uint16(cmd.P1)<<8 | uint16(cmd.P2)
	switch tag {
	case 0x004F:
		return c.aid(), iso7816.SWOK
	case 0x5F52:
		return c.historical(), iso7816.SWOK
	case 0x0065:
		var v []byte
		v = iso7816.AppendTLV(v, 0x5B, c.dos[0x5B])
		v = iso7816.AppendTLV(v, 0x5F2D, c.dos[0x5F2D])
		v = iso7816.AppendTLV(v, 0x5F35, c.dos[0x5F35])
		return v, iso7816.SWOK
	case 0x006E:
		return c.applicationData(), iso7816.SWOK
	case 0x007A:
		var cnt [4]byte
		binary.BigEndian.PutUint32(cnt[:], c.dsCount)
		return iso7816.TLVBytes(0x93, cnt[1:]), iso7816.SWOK
	case 0x00C4:
		return c.pwStatus(), iso7816.SWOK
	case 0x7F66:
		return extendedLength(), iso7816.SWOK
	case 0x00C0:
		return extendedCapabilities, iso7816.SWOK
	case 0x00C1, 0x00C2, 0x00C3:
		return c.attrs[tag-0xC1].Attributes(), iso7816.SWOK
	case 0x00C5:
		return c.fingerprints(), iso7816.SWOK
	case 0x00CD:
		return c.timestamps(), iso7816.SWOK
	case 0x00DE:
		return c.keyInfo(), iso7816.SWOK
	case 0x005E, 0x5F50, 0x7F21, 0x0101, 0x0102:
		return c.dos[tag], iso7816.SWOK
	case 0x00D6, 0x00D7, 0x00D8: // user interaction flags: off, a button
		if v, ok := c.dos[tag]; ok {
			return v, iso7816.SWOK
		}
		return []byte{0x00, 0x20}, iso7816.SWOK
	}
	return nil, iso7816.SWReferencedDataNotFound
}

func extendedLength() []byte {
	var v []byte
	v = iso7816.AppendTLV(v, 0x02, []byte{MaxCommand >> 8, MaxCommand & 0xFF})
	return iso7816.AppendTLV(v, 0x02, []byte{MaxResponse >> 8, MaxResponse & 0xFF})
}

func (c *Card) pwStatus() []byte {
	multi := byte(0)
	if c.pw1Multi {
		multi = 1
	}
	return []byte{multi, 0x7F, 0x7F, 0x7F, byte(c.tries[0]), byte(c.tries[1]), byte(c.tries[2])}
}

func (c *Card) fingerprints() []byte {
	var b []byte
	for _, f := range c.fprs {
		b = append(b, f[:]...)
	}
	return b
}

func (c *Card) timestamps() []byte {
	var b []byte
	for _, t := range c.times {
		b = binary.BigEndian.AppendUint32(b, t)
	}
	return b
}

func (c *Card) keyInfo() []byte {
	var b []byte
	for i, k := range c.keys {
		src := byte(0)
		if k != nil {
			src = k.source
		}
		b = append(b, byte(i+1), src)
	}
	return b
}

// applicationData is the application related data 6E (section 4.4.3.1).
func (c *Card) applicationData() []byte {
	var d []byte
	d = iso7816.AppendTLV(d, 0xC0, extendedCapabilities)
	for i := range c.attrs {
		d = iso7816.AppendTLV(d, uint16(0xC1+i), c.attrs[i].Attributes())
	}
	d = iso7816.AppendTLV(d, 0xC4, c.pwStatus())
	d = iso7816.AppendTLV(d, 0xC5, c.fingerprints())
	var ca []byte
	for _, f := range c.caFprs {
		ca = append(ca, f[:]...)
	}
	d = iso7816.AppendTLV(d, 0xC6, ca)
	d = iso7816.AppendTLV(d, 0xCD, c.timestamps())
	d = iso7816.AppendTLV(d, 0xDE, c.keyInfo())
	var v []byte
	v = iso7816.AppendTLV(v, 0x4F, c.aid())
	v = iso7816.AppendTLV(v, 0x5F52, c.historical())
	if !c.shortOnly {
		v = iso7816.AppendTLV(v, 0x7F66, extendedLength())
	}
	v = iso7816.AppendTLV(v, 0x73, d)
	return v
}

// putData is PUT DATA (section 7.2.8). Everything but the PW1 status byte
// needs PW3; C4 needs PW3 too on this card. The odd instruction (DB)
// imports a key.
func (c *Card) putData(cmd iso7816.Command) uint16 {
	if !c.verified.admin {
		return iso7816.SWSecurityNotSatisfied
	}
	if cmd.INS == 0xDB {
		return c.importKey(cmd)
	}
	tag := uint16(cmd.P1)<<8 | uint16(cmd.P2)
	v := cmd.Data
	switch tag {
	case 0x00C1, 0x00C2, 0x00C3:
		return c.putAttributes(Slot(tag-0xC1), v)
	case 0x00C4:
		if len(v) < 1 || v[0] > 1 {
			return iso7816.SWIncorrectData
		}
		c.pw1Multi = v[0] == 1
	case 0x00C7, 0x00C8, 0x00C9:
		if len(v) != 20 {
			return iso7816.SWWrongLength
		}
		copy(c.fprs[tag-0xC7][:], v)
	case 0x00CA, 0x00CB, 0x00CC:
		if len(v) != 20 {
			return iso7816.SWWrongLength
		}
		copy(c.caFprs[tag-0xCA][:], v)
	case 0x00CE, 0x00CF, 0x00D0:
		if len(v) != 4 {
			return iso7816.SWWrongLength
		}
		c.times[tag-0xCE] = binary.BigEndian.Uint32(v)
	case 0x00D6, 0x00D7, 0x00D8:
		if len(v) != 2 || v[0] > 2 {
			return iso7816.SWIncorrectData
		}
		c.dos[tag] = bytes.Clone(v)
	case 0x005B, 0x005E, 0x5F2D, 0x5F35, 0x5F50, 0x7F21, 0x0101, 0x0102:
		if len(v) > 255 && tag != 0x7F21 || len(v) > 2048 {
			return iso7816.SWWrongLength
		}
		c.dos[tag] = bytes.Clone(v)
	default:
		return iso7816.SWReferencedDataNotFound
	}
	return iso7816.SWOK
}

// putAttributes changes a slot's algorithm, deleting its key. Attributes
// the token does not support, or of the wrong kind for the slot (an ECDH
// curve for signing, ECDSA for decryption), are refused with 6A80.
func (c *Card) putAttributes(s Slot, v []byte) uint16 {
	a, ok := ParseAttributes(v)
	if !ok || !c.profile.supports(a) || s == SlotDecrypt && !a.deciphers() || s != SlotDecrypt && !a.signs() {
		return iso7816.SWIncorrectData
	}
	if a != c.attrs[s] {
		c.attrs[s] = a
		c.keys[s] = nil
		c.fprs[s] = [20]byte{}
		c.times[s] = 0
	}
	return iso7816.SWOK
}

// generateKeyPair is GENERATE ASYMMETRIC KEY PAIR (section 7.2.14): P1 80
// generates (PW3 needed), 81 reads the public key.
func (c *Card) generateKeyPair(cmd iso7816.Command) ([]byte, uint16, op) {
	if len(cmd.Data) < 1 {
		return nil, iso7816.SWWrongLength, op{}
	}
	s, ok := slotOfCRT(cmd.Data[0])
	if !ok {
		return nil, iso7816.SWIncorrectData, op{}
	}
	switch cmd.P1 {
	case 0x81:
		if c.keys[s] == nil {
			return nil, iso7816.SWReferencedDataNotFound, op{}
		}
		return c.keys[s].publicTemplate(), iso7816.SWOK, op{}
	case 0x80:
	default:
		return nil, iso7816.SWWrongP1P2, op{}
	}
	if !c.verified.admin {
		return nil, iso7816.SWSecurityNotSatisfied, op{}
	}
	k, err := generate(c.attrs[s], c.rand)
	if err != nil {
		return nil, iso7816.SWConditionsNotSatisfied, op{}
	}
	c.keys[s] = k
	c.fprs[s] = [20]byte{}
	c.times[s] = 0
	if s == SlotSign {
		c.dsCount = 0
	}
	return k.publicTemplate(), iso7816.SWOK, op{kind: opGenerate, alg: k.alg}
}

// pso is PERFORM SECURITY OPERATION: 9E9A computes a digital signature,
// 8086 deciphers.
func (c *Card) pso(cmd iso7816.Command) ([]byte, uint16, op) {
	switch {
	case cmd.P1 == 0x9E && cmd.P2 == 0x9A:
		if !c.verified.cds {
			return nil, iso7816.SWSecurityNotSatisfied, op{}
		}
		out, code, o := c.signWith(SlotSign, cmd.Data)
		if code == iso7816.SWOK {
			c.dsCount++
			if !c.pw1Multi {
				c.verified.cds = false
			}
		}
		return out, code, o
	case cmd.P1 == 0x80 && cmd.P2 == 0x86:
		if !c.verified.other {
			return nil, iso7816.SWSecurityNotSatisfied, op{}
		}
		k := c.keys[SlotDecrypt]
		if k == nil {
			return nil, iso7816.SWReferencedDataNotFound, op{}
		}
		out, err := k.decipher(cmd.Data)
		if err != nil {
			return nil, statusOf(err), op{}
		}
		return out, iso7816.SWOK, op{kind: opDecipher, alg: k.alg, n: len(cmd.Data)}
	}
	return nil, iso7816.SWWrongP1P2, op{}
}

// internalAuthenticate signs with the authentication key (section 7.2.13).
func (c *Card) internalAuthenticate(cmd iso7816.Command) ([]byte, uint16, op) {
	if cmd.P1 != 0 || cmd.P2 != 0 {
		return nil, iso7816.SWWrongP1P2, op{}
	}
	if !c.verified.other {
		return nil, iso7816.SWSecurityNotSatisfied, op{}
	}
	return c.signWith(SlotAuth, cmd.Data)
}

func (c *Card) signWith(s Slot, in []byte) ([]byte, uint16, op) {
	k := c.keys[s]
	if k == nil {
		return nil, iso7816.SWReferencedDataNotFound, op{}
	}
	out, err := k.sign(c.rand, in)
	if err != nil {
		return nil, statusOf(err), op{}
	}
	return out, iso7816.SWOK, op{kind: opSign, alg: k.alg, n: len(in)}
}

func statusOf(err error) uint16 {
	if errors.Is(err, errNotHere) {
		return iso7816.SWConditionsNotSatisfied
	}
	return iso7816.SWIncorrectData
}
