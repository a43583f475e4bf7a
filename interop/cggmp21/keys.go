package cggmp21

import (
	"encoding/binary"
	"fmt"

	"github.com/taurusgroup/multi-party-sig/pkg/math/curve"
	"github.com/taurusgroup/multi-party-sig/protocols/cmp"
)

// KeysFile is where the tests keep the outputs of one key generation
// (testdata/keys.bin), written by `go generate` (TestWriteKeys) because a
// key generation takes a minute of CPU: its safe primes for Paillier.
// The keys are throwaway benchmark keys; the file holds their secrets.
const KeysFile = "testdata/keys.bin"

// EncodeKeys encodes keys: for each party, its config's length (uint32,
// big-endian) and the library's encoding of it.
func EncodeKeys(keys Keys) ([]byte, error) {
	var out []byte
	for i, c := range keys {
		b, err := c.MarshalBinary()
		if err != nil {
			return nil, fmt.Errorf("cggmp21: participant %d's config: %w", i+1, err)
		}
		out = binary.BigEndian.AppendUint32(out, uint32(len(b)))
		out = append(out, b...)
	}
	return out, nil
}

// DecodeKeys decodes what EncodeKeys wrote and checks that the three
// configs are participants 1, 2 and 3 of one 2-of-3 group key.
func DecodeKeys(b []byte) (Keys, error) {
	var keys Keys
	for i := range keys {
		if len(b) < 4 {
			return keys, fmt.Errorf("%w: keys: participant %d's length cut short", ErrFrame, i+1)
		}
		n := binary.BigEndian.Uint32(b)
		if uint64(n) > uint64(len(b)-4) {
			return keys, fmt.Errorf("%w: keys: participant %d's config of %d bytes, %d left", ErrFrame, i+1, n, len(b)-4)
		}
		c, err := unmarshalConfig(b[4 : 4+n])
		if err != nil {
			return keys, fmt.Errorf("%w: keys: participant %d: %w", ErrFrame, i+1, err)
		}
		if c.ID != IDs[i] || c.Threshold != Threshold || len(c.Public) != 3 {
			return keys, fmt.Errorf("%w: keys: config %d is not participant %s of a 2-of-3 key", ErrFrame, i+1, IDs[i])
		}
		keys[i] = c
		b = b[4+n:]
	}
	if len(b) != 0 {
		return keys, fmt.Errorf("%w: keys: %d bytes after the third config", ErrFrame, len(b))
	}
	for _, c := range keys[1:] {
		if !c.PublicPoint().Equal(keys[0].PublicPoint()) {
			return keys, fmt.Errorf("%w: keys: the configs' group keys differ", ErrFrame)
		}
	}
	return keys, nil
}

// unmarshalConfig is the library's Config.UnmarshalBinary, with its
// panics (it dereferences what CBOR's null decodes to, for one) turned
// into errors.
func unmarshalConfig(b []byte) (c *cmp.Config, err error) {
	defer func() {
		if p := recover(); p != nil {
			c, err = nil, fmt.Errorf("the library's decoder panicked: %v", p)
		}
	}()
	c = cmp.EmptyConfig(curve.Secp256k1{})
	if err := c.UnmarshalBinary(b); err != nil {
		return nil, err
	}
	return c, nil
}
