package secretconn

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"github.com/signerkit/signerkit/signer"
)

// rawConn is a net.Conn that reads from r and discards writes.
type rawConn struct {
	net.Conn // nil: only Read and Write are used
	r        io.Reader
}

func (c *rawConn) Read(p []byte) (int, error)  { return c.r.Read(p) }
func (c *rawConn) Write(p []byte) (int, error) { return len(p), nil }

var fuzzKey = bytes.Repeat([]byte{0x42}, 32)

// FuzzFrame feeds the frame decoder. Each input is read twice: as the
// sealed stream off the wire (which must fail authentication, or end),
// and as plaintext frames sealed with the right key (which must give back
// their data or be refused as too large).
func FuzzFrame(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{5, 0, 0, 0, 'h', 'e', 'l', 'l', 'o'})
	f.Add([]byte{0, 4, 0, 0})
	f.Add([]byte{1, 4, 0, 0, 'x'})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff})
	f.Add(bytes.Repeat([]byte{0}, sealedFrameSize+3))
	f.Fuzz(func(t *testing.T, data []byte) {
		// As ciphertext.
		c, err := newConn(&rawConn{r: bytes.NewReader(data)}, Merlin, fuzzKey, fuzzKey)
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.Read(make([]byte, 2048))
		if err == nil {
			t.Fatal("forged frame accepted")
		}
		if !errors.Is(err, ErrBadFrame) && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Fatalf("unexpected error %v", err)
		}

		// As plaintext frames.
		var wire []byte
		var frames [][]byte
		for p := data; len(p) > 0; {
			var fr [frameSize]byte
			n := copy(fr[:], p)
			p = p[n:]
			frames = append(frames, fr[:])
			wire = c.sendAEAD.Seal(wire, nonce(uint64(len(frames)-1)), fr[:], nil)
		}
		c, _ = newConn(&rawConn{r: bytes.NewReader(wire)}, Merlin, fuzzKey, fuzzKey)
		for _, fr := range frames {
			l := binary.LittleEndian.Uint32(fr)
			if l == 0 {
				continue // Read skips empty frames; checked below
			}
			buf := make([]byte, 2048)
			n, err := c.Read(buf)
			if l > dataMaxSize {
				if !errors.Is(err, ErrFrameTooLarge) || !errors.Is(err, signer.ErrProtocol) {
					t.Fatalf("length %d: %v", l, err)
				}
				return
			}
			if err != nil || !bytes.Equal(buf[:n], fr[dataLenSize:dataLenSize+l]) {
				t.Fatalf("frame of %d: %d, %v", l, n, err)
			}
		}
		if n, err := c.Read(make([]byte, 8)); n != 0 || !errors.Is(err, io.EOF) {
			t.Fatalf("after the last frame: %d, %v", n, err)
		}
	})
}

// FuzzHandshake feeds the handshake decoders: the length prefix, the
// ephemeral key and both variants' authentication messages, and a whole
// handshake whose peer sends the input.
func FuzzHandshake(f *testing.F) {
	pub := key(2).Public().(ed25519.PublicKey)
	sig := bytes.Repeat([]byte{3}, 64)
	f.Add(encodeEphKey(bytes.Repeat([]byte{9}, 32)))
	f.Add(encodeEphKey(make([]byte, 32)))
	f.Add(encodeAuthSig(Merlin, pub, sig))
	f.Add(encodeAuthSig(PreMerlin, pub, sig))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0x0f})
	f.Add([]byte{0x03, 0x0b, 0x00, 0x00})
	f.Add(appendDelimited(nil, appendBytesField(appendBytesField(nil, 1, appendBytesField(nil, 2, make([]byte, 33))), 2, sig)))
	f.Fuzz(func(t *testing.T, data []byte) {
		body, err := readDelimited(bytes.NewReader(data), maxHandshakeMsg)
		if err != nil {
			var we *wireError
			if !errors.As(err, &we) && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Fatalf("readDelimited: %v", err)
			}
			body = data
		}
		if k, err := decodeEphKey(body); err == nil {
			// What decodes re-encodes to something that decodes the same.
			if k2, err := decodeEphKey(encodeEphKey(k[:])[1:]); err != nil || k2 != k {
				t.Fatal("ephemeral key does not round-trip")
			}
		}
		for _, v := range variants {
			p, s, err := decodeAuthSig(v, body)
			if err != nil {
				var we *wireError
				if !errors.As(err, &we) {
					t.Fatalf("decodeAuthSig: untyped error %v", err)
				}
				continue
			}
			if len(p) != ed25519.PublicKeySize {
				t.Fatalf("key of %d bytes", len(p))
			}
			msg := encodeAuthSig(v, p, s)
			b2, _ := readDelimited(bytes.NewReader(msg), 1<<20)
			if p2, s2, err := decodeAuthSig(v, b2); err != nil || !p2.Equal(p) || !bytes.Equal(s2, s) {
				t.Fatal("auth message does not round-trip")
			}
		}

		// A whole handshake against a peer that sends data and hangs up.
		a, b := net.Pipe()
		go func() {
			go io.Copy(io.Discard, b)
			b.Write(data)
			b.Close()
		}()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		c, err := Handshake(ctx, a, key(1), Merlin)
		a.Close()
		if c != nil || err == nil {
			t.Fatal("handshake succeeded against noise")
		}
		if errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("handshake hung: %v", err)
		}
	})
}
