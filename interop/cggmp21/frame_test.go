package cggmp21

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/taurusgroup/multi-party-sig/pkg/protocol"
)

func TestFrameRoundTrip(t *testing.T) {
	msg := &protocol.Message{SSID: []byte("ssid"), From: "2", To: "1", Protocol: "cmp/presign", RoundNumber: 3, Data: []byte{1, 2, 3}}
	body, err := msg.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	buf.Write(appendFrame(nil, frame{session: 7, kind: kindMessage, body: body}))
	buf.Write(appendFrame(nil, frame{session: 8, kind: kindRequest, body: request{presig: 1, hash: [32]byte{9}}.encode()}))
	f, err := readFrame(&buf)
	if err != nil || f.session != 7 || f.kind != kindMessage {
		t.Fatalf("first frame %+v, %v", f, err)
	}
	got, err := decodeMessage(f.body, "2")
	if err != nil || got.From != "2" || got.RoundNumber != 3 || !bytes.Equal(got.Data, msg.Data) {
		t.Fatalf("message %v, %v", got, err)
	}
	if _, err := decodeMessage(f.body, "3"); !errors.Is(err, ErrFrame) {
		t.Fatalf("a message from 2 on 3's connection: %v", err)
	}
	f, err = readFrame(&buf)
	if err != nil || f.kind != kindRequest {
		t.Fatalf("second frame %+v, %v", f, err)
	}
	if q, err := decodeRequest(f.body); err != nil || q.presig != 1 || q.hash[0] != 9 {
		t.Fatalf("request %+v, %v", q, err)
	}
	if _, err := readFrame(&buf); err != io.EOF {
		t.Fatalf("after the frames: %v, want io.EOF", err)
	}
	for name, b := range map[string][]byte{
		"short length": {0, 0, 0, 8, 0, 0, 0, 0, 0, 0, 0, 0},
		"huge length":  {0xff, 0xff, 0xff, 0xff},
		"bad kind":     {0, 0, 0, 9, 0, 0, 0, 0, 0, 0, 0, 1, 7},
		"cut body":     {0, 0, 0, 12, 0, 0, 0, 0, 0, 0, 0, 1, 1, 0xa0},
	} {
		if _, err := readFrame(bytes.NewReader(b)); !errors.Is(err, ErrFrame) {
			t.Errorf("%s: %v, want ErrFrame", name, err)
		}
	}
}

// FuzzReadFrame feeds readFrame, and decodeMessage or decodeRequest after
// it, arbitrary bytes: each either decodes or returns ErrFrame (io.EOF
// for nothing at all), and never panics.
func FuzzReadFrame(f *testing.F) {
	msg := &protocol.Message{SSID: []byte("s"), From: "1", Protocol: "cmp/sign", RoundNumber: 8, Data: []byte{0x40}, Broadcast: true}
	body, _ := msg.MarshalBinary()
	f.Add(appendFrame(nil, frame{session: 1, kind: kindMessage, body: body}))
	f.Add(appendFrame(nil, frame{session: 2, kind: kindRequest, body: request{}.encode()}))
	f.Add([]byte{0, 0, 0, 9, 0, 0, 0, 0, 0, 0, 0, 0, 3})
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		fr, err := readFrame(bytes.NewReader(b))
		if err != nil {
			if err != io.EOF && !errors.Is(err, ErrFrame) {
				t.Fatalf("error %v is neither io.EOF nor ErrFrame", err)
			}
			return
		}
		switch fr.kind {
		case kindMessage:
			if m, err := decodeMessage(fr.body, "1"); err == nil && m.From != "1" {
				t.Fatalf("decoded a message from %q as party 1's", m.From)
			} else if err != nil && !errors.Is(err, ErrFrame) {
				t.Fatal(err)
			}
		case kindRequest:
			if _, err := decodeRequest(fr.body); err != nil && !errors.Is(err, ErrFrame) {
				t.Fatal(err)
			}
		}
	})
}

// FuzzDecodeKeys feeds DecodeKeys the keys file cut, grown and garbled:
// it decodes or returns ErrFrame, and never panics.
func FuzzDecodeKeys(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{0, 0, 0, 1, 0xa0})
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		if _, err := DecodeKeys(b); err != nil && !errors.Is(err, ErrFrame) {
			t.Fatal(err)
		}
	})
}

func TestDecodeKeys(t *testing.T) {
	keys := loadKeys(t)
	b, err := EncodeKeys(keys)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := DecodeKeys(b); err != nil {
		t.Fatal(err)
	}
	for name, bad := range map[string][]byte{
		"cut":      b[:len(b)-1],
		"trailing": append(bytes.Clone(b), 0),
		"garbled":  append([]byte{0, 0, 0, 3, 1, 2, 3}, b[4+int(b[2])<<8+int(b[3]):]...),
	} {
		if _, err := DecodeKeys(bad); !errors.Is(err, ErrFrame) {
			t.Errorf("%s: %v, want ErrFrame", name, err)
		}
	}
	swapped := Keys{keys[1], keys[0], keys[2]}
	sb, err := EncodeKeys(swapped)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := DecodeKeys(sb); !errors.Is(err, ErrFrame) {
		t.Errorf("participants out of order: %v, want ErrFrame", err)
	}
}
