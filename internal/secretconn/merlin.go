package secretconn

import "encoding/binary"

// This file implements the Merlin transcript (https://merlin.cool) on the
// subset of STROBE-128 (https://strobe.sourceforge.io) that Merlin uses:
// meta-AD, AD and PRF. The Merlin-bound handshake needs a transcript of three
// messages and one 32-byte challenge, once per connection.
//
// Why not import github.com/gtank/merlin v0.1.1, which gno's tmkms listener
// uses? Measured with go1.26.8 (CGO_ENABLED=0, -trimpath, linux/amd64): the
// import costs little binary (a hello-world of 2,392,617 bytes grows to
// 2,431,536 with one transcript: +39 KB) but adds two modules to the go.mod
// of every user of this library: gtank/merlin and mimoo/StrobeGo, an
// untagged 2018 pseudo-version that carries its own Keccak in amd64
// assembly. golang.org/x/crypto/sha3 (now a wrapper of crypto/sha3) does not
// expose the Keccak permutation, so it cannot stand in. What the handshake
// needs, three appends and one 32-byte challenge per connection, is about
// 150 lines here and in keccak.go (about 4 KB of code and tables in the
// binary), with no module added. They are checked against Merlin's two
// published test vectors, the permutation against crypto/sha3's SHA3-256,
// and, in the interop module, by handshakes with
// CometBFT v0.38 (curve25519-voi's Merlin), CometBFT v0.34 and gno's tmkms
// listener (both gtank/merlin).

const (
	strobeR = 166 // STROBE-128 rate: 200 - 2*(128/8) - 2

	flagI = 1 << 0
	flagA = 1 << 1
	flagC = 1 << 2
	flagT = 1 << 3
	flagM = 1 << 4
	flagK = 1 << 5
)

// strobe128 is the STROBE-128 duplex state, limited to the operations Merlin
// performs (no transport, no keying, no direction tracking).
type strobe128 struct {
	st       [200]byte
	pos      byte
	posBegin byte
	curFlags byte
}

func newStrobe128(protocol []byte) *strobe128 {
	s := &strobe128{}
	copy(s.st[:6], []byte{1, strobeR + 2, 1, 0, 1, 96})
	copy(s.st[6:18], "STROBEv1.0.2")
	keccakF1600(&s.st)
	s.metaAD(protocol, false)
	return s
}

func (s *strobe128) runF() {
	s.st[s.pos] ^= s.posBegin
	s.st[s.pos+1] ^= 0x04
	s.st[strobeR+1] ^= 0x80
	keccakF1600(&s.st)
	s.pos, s.posBegin = 0, 0
}

func (s *strobe128) absorb(data []byte) {
	for _, b := range data {
		s.st[s.pos] ^= b
		s.pos++
		if s.pos == strobeR {
			s.runF()
		}
	}
}

func (s *strobe128) squeeze(out []byte) {
	for i := range out {
		out[i] = s.st[s.pos]
		s.st[s.pos] = 0
		s.pos++
		if s.pos == strobeR {
			s.runF()
		}
	}
}

func (s *strobe128) beginOp(flags byte, more bool) {
	if more {
		if s.curFlags != flags {
			panic("secretconn: strobe operation continued with other flags")
		}
		return
	}
	if flags&flagT != 0 {
		panic("secretconn: strobe transport operations are not implemented")
	}
	old := s.posBegin
	s.posBegin = s.pos + 1
	s.curFlags = flags
	s.absorb([]byte{old, flags})
	if flags&(flagC|flagK) != 0 && s.pos != 0 {
		s.runF()
	}
}

func (s *strobe128) metaAD(data []byte, more bool) {
	s.beginOp(flagM|flagA, more)
	s.absorb(data)
}

func (s *strobe128) ad(data []byte, more bool) {
	s.beginOp(flagA, more)
	s.absorb(data)
}

func (s *strobe128) prf(out []byte, more bool) {
	s.beginOp(flagI|flagA|flagC, more)
	s.squeeze(out)
}

// transcript is a Merlin v1.0 transcript.
type transcript struct{ s *strobe128 }

func newTranscript(label string) *transcript {
	t := &transcript{s: newStrobe128([]byte("Merlin v1.0"))}
	t.appendMessage("dom-sep", []byte(label))
	return t
}

func (t *transcript) appendMessage(label string, msg []byte) {
	var n [4]byte
	binary.LittleEndian.PutUint32(n[:], uint32(len(msg)))
	t.s.metaAD([]byte(label), false)
	t.s.metaAD(n[:], true)
	t.s.ad(msg, false)
}

func (t *transcript) challengeBytes(label string, out []byte) {
	var n [4]byte
	binary.LittleEndian.PutUint32(n[:], uint32(len(out)))
	t.s.metaAD([]byte(label), false)
	t.s.metaAD(n[:], true)
	t.s.prf(out, false)
}
