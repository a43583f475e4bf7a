package iso7816

import (
	"bytes"
	"errors"
	"testing"
)

func FuzzParseCommand(f *testing.F) {
	for _, s := range [][]byte{
		{0, 0xA4, 4, 0, 6, 0xD2, 0x76, 0, 1, 0x24, 1},
		{0, 0xCA, 0, 0x6E, 0},
		{0, 0xCA, 0, 0x6E},
		{0x10, 0x2A, 0x9E, 0x9A, 2, 1, 2, 0},
		{0, 0x2A, 0x80, 0x86, 0, 0, 3, 1, 2, 3, 0, 0},
		{0, 0xCA, 0, 0x6E, 0, 0, 0},
		{0, 0x2A, 0x80, 0x86, 0, 0, 0},
		{0, 1},
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := ParseCommand(b)
		if err != nil {
			if !errors.Is(err, ErrFormat) {
				t.Fatalf("error %v does not wrap ErrFormat", err)
			}
			return
		}
		// What parses re-encodes to an APDU that parses the same.
		out, err := c.Bytes()
		if err != nil {
			t.Fatalf("re-encoding %+v: %v", c, err)
		}
		d, err := ParseCommand(out)
		if err != nil {
			t.Fatalf("re-encoded %x does not parse: %v", out, err)
		}
		if d.CLA != c.CLA || d.INS != c.INS || d.P1 != c.P1 || d.P2 != c.P2 || !bytes.Equal(d.Data, c.Data) || d.Le != c.Le {
			t.Fatalf("round trip %x → %+v → %x → %+v", b, c, out, d)
		}
	})
}

func FuzzParseTLV(f *testing.F) {
	f.Add(TLVBytes(0x7F49, append(TLVBytes(0x81, make([]byte, 256)), TLVBytes(0x82, []byte{1, 0, 1})...)))
	f.Add(TLVBytes(0x6E, TLVBytes(0x73, TLVBytes(0xC1, []byte{1, 8, 0, 0, 0x20, 0}))))
	f.Add([]byte{0x5F})
	f.Add([]byte{0x81, 0x82, 0xFF})
	f.Fuzz(func(t *testing.T, b []byte) {
		objs, err := ParseTLV(b)
		if err != nil {
			if !errors.Is(err, ErrFormat) {
				t.Fatalf("error %v does not wrap ErrFormat", err)
			}
			return
		}
		var out []byte
		for _, o := range objs {
			out = AppendTLV(out, o.Tag, o.Value)
		}
		again, err := ParseTLV(out)
		if err != nil || len(again) != len(objs) {
			t.Fatalf("re-encoded TLV %x: %v", out, err)
		}
		for i := range objs {
			if again[i].Tag != objs[i].Tag || !bytes.Equal(again[i].Value, objs[i].Value) {
				t.Fatalf("object %d changed", i)
			}
		}
		Find(b, 0x86)
	})
}

func TestParseCommandCases(t *testing.T) {
	cases := []struct {
		in   []byte
		data int
		le   int
		ext  bool
	}{
		{[]byte{0, 1, 2, 3}, 0, 0, false},
		{[]byte{0, 1, 2, 3, 0}, 0, 256, false},
		{[]byte{0, 1, 2, 3, 2, 9, 9}, 2, 0, false},
		{[]byte{0, 1, 2, 3, 2, 9, 9, 5}, 2, 5, false},
		{[]byte{0, 1, 2, 3, 0, 0, 0}, 0, 65536, true},
		{[]byte{0, 1, 2, 3, 0, 0, 1, 9}, 1, 0, true},
		{[]byte{0, 1, 2, 3, 0, 0, 1, 9, 1, 0}, 1, 256, true},
	}
	for _, c := range cases {
		got, err := ParseCommand(c.in)
		if err != nil || len(got.Data) != c.data || got.Le != c.le || got.Extended != c.ext {
			t.Errorf("%x: %+v, %v", c.in, got, err)
		}
	}
	for _, bad := range [][]byte{{0, 1, 2}, {0, 1, 2, 3, 5, 1}, {0, 1, 2, 3, 0, 0}, {0, 1, 2, 3, 0, 0, 0, 1}, {0, 1, 2, 3, 0, 0, 2, 1}} {
		if _, err := ParseCommand(bad); !errors.Is(err, ErrFormat) {
			t.Errorf("%x: %v, want ErrFormat", bad, err)
		}
	}
}

func FuzzParseHeaderList(f *testing.F) {
	f.Add(AppendHeader(AppendHeader(AppendHeader(nil, 0x91, 4), 0x92, 128), 0x93, 256))
	f.Add([]byte{0x92, 0x20, 0x99})
	f.Add([]byte{0x5F, 0x48, 0x82, 0x01})
	f.Fuzz(func(t *testing.T, b []byte) {
		list, err := ParseHeaderList(b)
		if err != nil {
			if !errors.Is(err, ErrFormat) {
				t.Fatalf("error %v does not wrap ErrFormat", err)
			}
			return
		}
		// What parses re-encodes to a list that parses the same (the
		// encoding may be shorter: a long-form length of a short value).
		var out []byte
		for _, e := range list {
			out = AppendHeader(out, e.Tag, e.Len)
		}
		again, err := ParseHeaderList(out)
		if err != nil || len(again) != len(list) {
			t.Fatalf("re-encoded %x: %v, %d entries of %d", out, err, len(again), len(list))
		}
		for i := range list {
			if again[i] != list[i] {
				t.Fatalf("entry %d: %+v, re-encoded %+v", i, list[i], again[i])
			}
		}
	})
}
