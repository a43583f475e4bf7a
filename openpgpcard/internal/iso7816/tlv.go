package iso7816

// TLV is one BER-TLV data object: its tag (one or two bytes, as the
// OpenPGP card uses them, e.g. 0x5F50 or 0x7F49) and its value. A
// constructed object's Value holds its children, still encoded.
type TLV struct {
	Tag   uint16
	Value []byte
}

// Constructed reports whether the tag's constructed bit (0x20 in its first
// byte) is set.
func (t TLV) Constructed() bool {
	first := byte(t.Tag)
	if t.Tag > 0xFF {
		first = byte(t.Tag >> 8)
	}
	return first&0x20 != 0
}

// ParseTLV decodes a sequence of BER-TLV objects filling b: tags of one or
// two bytes, lengths in the short form or 0x81/0x82 long forms. Values
// alias b.
func ParseTLV(b []byte) ([]TLV, error) {
	var out []TLV
	for len(b) > 0 {
		t, rest, err := parseOne(b)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
		b = rest
	}
	return out, nil
}

func parseOne(b []byte) (TLV, []byte, error) {
	tag, n, i, err := parseHeader(b)
	if err != nil {
		return TLV{}, nil, err
	}
	if len(b)-i < n {
		return TLV{}, nil, malformed("TLV: tag %x: %d-byte value, %d bytes left", tag, n, len(b)-i)
	}
	return TLV{Tag: tag, Value: b[i : i+n]}, b[i+n:], nil
}

// parseHeader reads a tag and a length from b, returning them and how
// many bytes they took.
func parseHeader(b []byte) (tag uint16, n, i int, err error) {
	tag = uint16(b[0])
	i = 1
	if b[0]&0x1F == 0x1F {
		if len(b) < 2 {
			return 0, 0, 0, malformed("TLV: two-byte tag %02x cut short", b[0])
		}
		if b[1]&0x80 != 0 {
			return 0, 0, 0, malformed("TLV: tag %02x%02x longer than two bytes", b[0], b[1])
		}
		tag = tag<<8 | uint16(b[1])
		i = 2
	}
	if len(b) <= i {
		return 0, 0, 0, malformed("TLV: tag %x without a length", tag)
	}
	n = int(b[i])
	i++
	switch {
	case n < 0x80:
	case n == 0x81:
		if len(b) < i+1 {
			return 0, 0, 0, malformed("TLV: tag %x: length cut short", tag)
		}
		n = int(b[i])
		i++
	case n == 0x82:
		if len(b) < i+2 {
			return 0, 0, 0, malformed("TLV: tag %x: length cut short", tag)
		}
		n = int(b[i])<<8 | int(b[i+1])
		i += 2
	default:
		return 0, 0, 0, malformed("TLV: tag %x: length byte %02x", tag, n)
	}
	return tag, n, i, nil
}

// TagLength is one entry of a header list: a tag and the length of its
// value, which comes elsewhere. The cardholder private key template (7F48,
// OpenPGP card specification 4.4.3.12) is such a list, its values
// concatenated in 5F48.
type TagLength struct {
	Tag uint16
	Len int
}

// ParseHeaderList decodes a sequence of tags and lengths without values,
// filling b.
func ParseHeaderList(b []byte) ([]TagLength, error) {
	var out []TagLength
	for len(b) > 0 {
		tag, n, i, err := parseHeader(b)
		if err != nil {
			return nil, err
		}
		out = append(out, TagLength{tag, n})
		b = b[i:]
	}
	return out, nil
}

// AppendHeader appends tag and the length n, without a value.
func AppendHeader(dst []byte, tag uint16, n int) []byte {
	if tag > 0xFF {
		dst = append(dst, byte(tag>>8))
	}
	dst = append(dst, byte(tag))
	switch {
	case n < 0x80:
		return append(dst, byte(n))
	case n <= 0xFF:
		return append(dst, 0x81, byte(n))
	}
	return append(dst, 0x82, byte(n>>8), byte(n))
}

// Find returns the value of the first object with tag in b, searching
// constructed objects depth-first, and whether it was found. Malformed
// input is not found.
func Find(b []byte, tag uint16) ([]byte, bool) {
	return find(b, tag, 0)
}

func find(b []byte, tag uint16, depth int) ([]byte, bool) {
	if depth > 8 {
		return nil, false
	}
	objs, err := ParseTLV(b)
	if err != nil {
		return nil, false
	}
	for _, o := range objs {
		if o.Tag == tag {
			return o.Value, true
		}
		if o.Constructed() {
			if v, ok := find(o.Value, tag, depth+1); ok {
				return v, true
			}
		}
	}
	return nil, false
}

// AppendTLV appends the object tag‖length‖value to dst.
func AppendTLV(dst []byte, tag uint16, value []byte) []byte {
	return append(AppendHeader(dst, tag, len(value)), value...)
}

// TLVBytes returns one encoded object.
func TLVBytes(tag uint16, value []byte) []byte { return AppendTLV(nil, tag, value) }
