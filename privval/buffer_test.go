package privval

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"runtime"
	"testing"
	"testing/iotest"
	"time"
)

// widestReader is a frameReader that records the largest buffer a Read
// was given.
type widestReader struct {
	*bufio.Reader
	widest int
}

func (w *widestReader) Read(p []byte) (int, error) {
	w.widest = max(w.widest, len(p))
	return w.Reader.Read(p)
}

// allocated returns the bytes the process allocated while f ran.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestReadFrameAllocatesAsDataArrives: a frame that announces the largest
// length and brings no data costs frameChunk bytes, not the length; frames
// of every size up to the largest still read whole, from a reader that
// hands out one byte at a time too, into a fresh or a reused buffer.
func TestReadFrameAllocatesAsDataArrives(t *testing.T) {
	prefix := binary.AppendUvarint(nil, MaxNativeFrame)
	var err error
	var widest int
	const runs = 20
	n := allocated(func() {
		for range runs {
			r := &widestReader{Reader: bufio.NewReaderSize(bytes.NewReader(prefix), 16)}
			_, err = readFrame(r, MaxNativeFrame, nil)
			widest = max(widest, r.widest)
		}
	})
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("an announced frame without data: %v", err)
	}
	if widest > frameChunk {
		t.Errorf("readFrame asked for %d bytes at once before any data came, want at most %d", widest, frameChunk)
	}
	if per := n / runs; per > 4*frameChunk {
		t.Errorf("an announced %d-byte frame without data allocated %d bytes, want at most %d", MaxNativeFrame, per, 4*frameChunk)
	}

	for _, size := range []int{0, 1, frameChunk - 1, frameChunk, frameChunk + 1, 3*frameChunk + 7, 100_000, MaxNativeFrame} {
		body := make([]byte, size)
		for i := range body {
			body[i] = byte(i * 7)
		}
		stream := appendFrame(appendFrame(nil, body), []byte("next"))
		readers := map[string]func() frameReader{
			"whole": func() frameReader { return bufio.NewReader(bytes.NewReader(stream)) },
			"one byte at a time": func() frameReader {
				return bufio.NewReaderSize(iotest.OneByteReader(bytes.NewReader(stream)), 16)
			},
		}
		for name, mk := range readers {
			for _, buf := range [][]byte{nil, make([]byte, 0, 10), make([]byte, 0, MaxNativeFrame)} {
				r := mk()
				got, err := readFrame(r, MaxNativeFrame, buf)
				if err != nil || !bytes.Equal(got, body) {
					t.Fatalf("%d bytes, %s, buffer of %d: %d bytes, %v", size, name, cap(buf), len(got), err)
				}
				if cap(buf) >= size && size > 0 && &got[0] != &buf[:1][0] {
					t.Fatalf("%d bytes: a buffer of %d was not reused", size, cap(buf))
				}
				if next, err := readFrame(r, MaxNativeFrame, got); err != nil || string(next) != "next" {
					t.Fatalf("%d bytes, %s: the next frame: %q, %v", size, name, next, err)
				}
			}
		}
		// Cut short anywhere: io.ErrUnexpectedEOF.
		if size > 0 {
			cut := appendFrame(nil, body)[:len(appendFrame(nil, body))-1]
			if _, err := readFrame(bufio.NewReader(bytes.NewReader(cut)), MaxNativeFrame, nil); !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Fatalf("%d bytes less one: %v", size, err)
			}
		}
	}
}

// TestServerAnnouncedFrameAllocatesLittle: after the handshake, a peer on
// the allowlist that announces a frame of MaxNativeFrame bytes and sends
// nothing more makes the Server allocate little; a large frame that does
// arrive is read and answered.
func TestServerAnnouncedFrameAllocatesLittle(t *testing.T) {
	ours, nodeID := identity(0x81), identity(0x82)
	_, _, ln, _ := startSecretServer(t, ours, nil, 0, nil)
	n, _, err := dialSecret(t, ln, nodeID)
	if err != nil {
		t.Fatal(err)
	}
	// The server is in its request loop once it has answered.
	if url, _, _, _ := n.call(encNativePubKeyRequest()); url != typePubKeyResponse {
		t.Fatal(url)
	}
	const runs = 5
	used := allocated(func() {
		for range runs {
			// Each connection announces the largest frame, then waits.
			m, sc, err := dialSecret(t, ln, nodeID)
			if err != nil {
				t.Fatal(err)
			}
			if url, _, _, _ := m.call(encNativePubKeyRequest()); url != typePubKeyResponse {
				t.Fatal(url)
			}
			if _, err := sc.Write(binary.AppendUvarint(nil, MaxNativeFrame)); err != nil {
				t.Fatal(err)
			}
		}
		time.Sleep(200 * time.Millisecond) // the server reads the prefixes
	})
	// Each connection costs its handshake, buffers and a few KiB of frame;
	// announcing the frame used to cost MaxNativeFrame each.
	t.Logf("%d bytes allocated per connection", used/runs)
	if per := used / runs; per > MaxNativeFrame/4 {
		t.Errorf("a connection announcing a %d-byte frame cost %d bytes", MaxNativeFrame, per)
	}

	// A large frame that arrives is read whole: sign bytes of 900 KB are
	// not a vote, and the answer says so.
	sb := bytes.Repeat([]byte{0x5a}, 900_000)
	if url, _, msg, isErr := n.call(encNativeSignRequest(sb)); !isErr || url != typeSignResponse {
		t.Fatalf("a 900 KB sign request: %s, %q, error %v", url, msg, isErr)
	}
	if url, _, _, _ := n.call(encNativePubKeyRequest()); url != typePubKeyResponse {
		t.Fatal("no answer after the large frame:", url)
	}
}
