package pkcs11

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/signerkit/signerkit/signer"
)

// A key exported under wrap (ExportWrapped) is C_WrapKey's output, which
// holds only the private key, with what C_UnwrapKey and the public key
// object need to restore it: the algorithm, label, CKA_ID, the public
// key's CKA_EC_POINT and the wrap mechanism. PKCS#11 defines no such
// container; this one is signerkit's:
//
//	magic "SKP11W1\n" ‖ algorithm (1) ‖ mechanism (4, big-endian)
//	‖ label ‖ id ‖ EC point ‖ wrapped key
//
// each of the last four as a two-byte big-endian length and its bytes.

const wrapMagic = "SKP11W1\n"

// wrappedKey is a decoded export.
type wrappedKey struct {
	alg     signer.Algorithm
	mech    uint32
	label   string
	id      []byte
	point   []byte
	wrapped []byte
}

// errWrapped is what a damaged export decodes to.
var errWrapped = errors.New("pkcs11: not a key exported under wrap by signerkit, or damaged")

func (w *wrappedKey) encode() []byte {
	out := append([]byte(wrapMagic), byte(w.alg))
	out = binary.BigEndian.AppendUint32(out, w.mech)
	for _, f := range [][]byte{[]byte(w.label), w.id, w.point, w.wrapped} {
		out = binary.BigEndian.AppendUint16(out, uint16(len(f)))
		out = append(out, f...)
	}
	return out
}

// wrapMechanismPad is CKM_AES_KEY_WRAP_PAD's value, the one mechanism an
// export is wrapped with (WrapMechanism, where cgo is on).
const wrapMechanismPad = 0x210a

// decodeWrapped parses an export; every error wraps signer.ErrInvalidKey.
func decodeWrapped(b []byte) (*wrappedKey, error) {
	if !bytes.HasPrefix(b, []byte(wrapMagic)) || len(b) < len(wrapMagic)+5 {
		return nil, fmt.Errorf("%w: %w", errWrapped, signer.ErrInvalidKey)
	}
	b = b[len(wrapMagic):]
	w := &wrappedKey{alg: signer.Algorithm(b[0]), mech: binary.BigEndian.Uint32(b[1:])}
	if w.mech != wrapMechanismPad {
		return nil, fmt.Errorf("%w (wrap mechanism %#x, this version unwraps %#x): %w", errWrapped, w.mech, wrapMechanismPad, signer.ErrInvalidKey)
	}
	b = b[5:]
	var fields [4][]byte
	for i := range fields {
		if len(b) < 2 || len(b) < 2+int(binary.BigEndian.Uint16(b)) {
			return nil, fmt.Errorf("%w (field %d cut short): %w", errWrapped, i+1, signer.ErrInvalidKey)
		}
		n := int(binary.BigEndian.Uint16(b))
		fields[i] = bytes.Clone(b[2 : 2+n])
		b = b[2+n:]
	}
	if len(b) != 0 {
		return nil, fmt.Errorf("%w (%d bytes after it): %w", errWrapped, len(b), signer.ErrInvalidKey)
	}
	w.label, w.id, w.point, w.wrapped = string(fields[0]), fields[1], fields[2], fields[3]
	if w.label == "" || len(w.wrapped) == 0 || len(w.point) == 0 {
		return nil, fmt.Errorf("%w (no label, public key or wrapped key): %w", errWrapped, signer.ErrInvalidKey)
	}
	switch w.alg {
	case signer.Ed25519, signer.ECDSAP256, signer.ECDSAP384:
	default:
		return nil, fmt.Errorf("pkcs11: a wrapped %v key: %w", w.alg, signer.ErrUnsupported)
	}
	if _, err := parseECPoint(w.alg, w.point); err != nil {
		return nil, fmt.Errorf("%w (its public key): %w", errWrapped, err)
	}
	return w, nil
}
