package threshold

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"testing"

	"filippo.io/edwards25519"
	"github.com/signerkit/signerkit/threshold/frost"
)

func fuzzCommitments(f *testing.F) []frost.Presigned {
	d, err := frost.Split(mustScalar(f), 2, 3, rand.Reader)
	if err != nil {
		f.Fatal(err)
	}
	var out []frost.Presigned
	for i, k := range d.Shares {
		n, _ := frost.Commit(k, rand.Reader)
		out = append(out, frost.Presigned{Handle: frost.NonceHandle(i + 1), Commitments: n.Commitments()})
	}
	return out
}

func mustScalar(f *testing.F) *edScalar {
	seed := bytes.Repeat([]byte{3}, 32)
	s, err := frost.SeedScalar(seed)
	if err != nil {
		f.Fatal(err)
	}
	return s
}

func FuzzParseSignRequest(f *testing.F) {
	ps := fuzzCommitments(f)
	b, _ := signRequest{handle: 7, others: []frost.SigningCommitments{ps[1].Commitments}, msg: []byte("vote")}.encode()
	f.Add(b)
	b, _ = signRequest{handle: 8, others: []frost.SigningCommitments{ps[0].Commitments, ps[2].Commitments}, msg: []byte("two")}.encode()
	f.Add(b)
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 1, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := parseSignRequest(b)
		if err != nil {
			return
		}
		out, err := r.encode()
		if err != nil || !bytes.Equal(out, b) {
			t.Fatalf("accepted %x, re-encoded %x (%v)", b, out, err)
		}
	})
}

func FuzzParsePresigned(f *testing.F) {
	ps := fuzzCommitments(f)
	for _, n := range []int{1, len(ps)} {
		enc, err := encodePresigned(ps[:n])
		if err != nil {
			f.Fatal(err)
		}
		f.Add(enc)
	}
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		out, err := parsePresigned(b, 1)
		if err != nil {
			return
		}
		if again, err := encodePresigned(out); err != nil || !bytes.Equal(again, b) {
			t.Fatalf("accepted %x, re-encoded %x (%v)", b, again, err)
		}
	})
}

func FuzzParsePresignRequest(f *testing.F) {
	f.Add(presignRequest{count: 64, flags: presignOutstanding}.encode())
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := parsePresignRequest(b)
		if err != nil {
			return
		}
		if out := r.encode(); !bytes.Equal(out, b) {
			t.Fatalf("accepted %x, re-encoded %x", b, out)
		}
	})
}

// FuzzReadFrame reads frames from arbitrary bytes, then checks that a
// frame read writes back as the same bytes.
func FuzzReadFrame(f *testing.F) {
	f.Add([]byte{typeSign, 0, 0, 0, 1, 0, 0, 2, 'h', 'i'})
	f.Add([]byte{typeError, 0, 0, 0, 1, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, b []byte) {
		r := bufio.NewReader(bytes.NewReader(b))
		for {
			fr, err := readFrame(r)
			if err != nil {
				return
			}
			var buf bytes.Buffer
			w := newFrameWriter(&buf)
			if err := w.write(fr); err != nil {
				t.Fatal(err)
			}
			if !bytes.HasPrefix(b, buf.Bytes()) {
				t.Fatalf("frame %x does not re-encode as read", buf.Bytes())
			}
			b = b[buf.Len():]
		}
	})
}

type edScalar = edwards25519.Scalar

func FuzzParseRelease(f *testing.F) {
	f.Add(encodeRelease([]frost.NonceHandle{1, 1 << 40}))
	f.Add([]byte{0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		hs, err := parseRelease(b)
		if err != nil {
			return
		}
		if out := encodeRelease(hs); !bytes.Equal(out, b) {
			t.Fatalf("accepted %x, re-encoded %x", b, out)
		}
	})
}
