package dkls23

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"testing"
)

// fuzzSeeds returns one real message of each kind, from a 2-of-3 run.
var fuzzSeeds = func() func(t testing.TB) map[string][]byte {
	var seeds map[string][]byte
	return func(t testing.TB) map[string][]byte {
		if seeds != nil {
			return seeds
		}
		seeds = map[string][]byte{}
		_, err := runKeygen(t, 2, 3, func(round, from, to int, msg []byte) {
			if from == 1 && to == 2 {
				seeds["keygen"+string(rune('0'+round))] = bytes.Clone(msg)
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		pre, err := runPresign(t, testShares(t), []int{1, 2}, func(round, from, to int, msg []byte) {
			if from == 1 {
				seeds["presign"+string(rune('0'+round))] = bytes.Clone(msg)
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		h := sha256.Sum256([]byte("fuzz"))
		s, err := pre[1].Sign(h[:])
		if err != nil {
			t.Fatal(err)
		}
		seeds["share"], _ = s.MarshalBinary()
		return seeds
	}
}()

// checkDecode requires that a decoder either succeeds, and then the
// message re-encodes to the same bytes, or fails with an *EncodingError.
func checkDecode(t *testing.T, in []byte, err error, reencode func() []byte) {
	if err != nil {
		if !errors.As(err, new(*EncodingError)) {
			t.Fatalf("decode error %T %v, want an *EncodingError", err, err)
		}
		return
	}
	if out := reencode(); !bytes.Equal(out, in) {
		t.Fatalf("re-encoding differs:\n%x\n%x", in, out)
	}
}

// addSeeds gives f the real message and variants of it: truncated,
// lengthened, another kind, and a point's prefix spoiled.
func addSeeds(f *testing.F, msg []byte) {
	f.Add(msg)
	f.Add(msg[:len(msg)-1])
	f.Add(append(bytes.Clone(msg), 0))
	f.Add([]byte{})
	bad := bytes.Clone(msg)
	bad[1]++
	f.Add(bad)
	bad = bytes.Clone(msg)
	bad[headerLen+32] ^= 0xff
	f.Add(bad)
}

func FuzzDecodeKeygenMsg1(f *testing.F) {
	addSeeds(f, fuzzSeeds(f)["keygen1"])
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := decodeKeygenMsg1(b)
		checkDecode(t, b, err, func() []byte { return m.encode() })
	})
}

func FuzzDecodeKeygenMsg2(f *testing.F) {
	addSeeds(f, fuzzSeeds(f)["keygen2"])
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := decodeKeygenMsg2(b, 2)
		checkDecode(t, b, err, func() []byte { return m.encode() })
	})
}

func FuzzDecodePresignMsg1(f *testing.F) {
	addSeeds(f, fuzzSeeds(f)["presign1"])
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := decodePresignMsg1(b)
		checkDecode(t, b, err, func() []byte { return m.encode() })
	})
}

func FuzzDecodePresignMsg2(f *testing.F) {
	addSeeds(f, fuzzSeeds(f)["presign2"])
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := decodePresignMsg2(b)
		checkDecode(t, b, err, func() []byte { return m.encode() })
	})
}

func FuzzUnmarshalSignShare(f *testing.F) {
	addSeeds(f, fuzzSeeds(f)["share"])
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := UnmarshalSignShare(b)
		checkDecode(t, b, err, func() []byte {
			out, err := s.MarshalBinary()
			if err != nil {
				t.Fatal(err)
			}
			return out
		})
	})
}

// FuzzUnmarshalShare: a stored share decodes only if it is whole and
// consistent, and re-encodes to the same bytes.
func FuzzUnmarshalShare(f *testing.F) {
	b, err := testShares(f)[1].MarshalBinary()
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Add(b[:len(b)-1])
	for _, at := range []int{2, 3, 4, 6, 6 + 31, 6 + 32 + 1, 6 + 32 + 33 + 5, len(b) - 1} {
		bad := bytes.Clone(b)
		bad[at] ^= 1
		f.Add(bad)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := UnmarshalShare(b)
		checkDecode(t, b, err, func() []byte {
			out, err := s.MarshalBinary()
			if err != nil {
				t.Fatal(err)
			}
			return out
		})
	})
}
