package etcdstore

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"hash/crc32"

	"github.com/signerkit/signerkit/guard"
)

// A chain's value in etcd (little endian):
//
//	0    magic "sk-etcd1"
//	8    height (int64)
//	16   round (int64)
//	24   step (uint8): 0 none, 1 propose, 2 prevote, 3 precommit
//	25   chain id length (uint16)
//	27   sign bytes length (uint16)
//	29   signature length (uint16)
//	31   SHA-256 of the sign bytes (32 bytes; of nothing at step 0)
//	63   chain id, sign bytes, signature
//	end  CRC-32C (Castagnoli) of all that precedes it (4 bytes)
const (
	valueMagic  = "sk-etcd1"
	valueHeader = 63
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// EncodeValue returns st as the value a chain's key holds.
func EncodeValue(st guard.State) []byte {
	b := make([]byte, valueHeader, valueHeader+len(st.ChainID)+len(st.SignBytes)+len(st.Signature)+4)
	copy(b, valueMagic)
	binary.LittleEndian.PutUint64(b[8:], uint64(st.Height))
	binary.LittleEndian.PutUint64(b[16:], uint64(st.Round))
	b[24] = byte(st.Step)
	binary.LittleEndian.PutUint16(b[25:], uint16(len(st.ChainID)))
	binary.LittleEndian.PutUint16(b[27:], uint16(len(st.SignBytes)))
	binary.LittleEndian.PutUint16(b[29:], uint16(len(st.Signature)))
	sum := sha256.Sum256(st.SignBytes)
	copy(b[31:], sum[:])
	b = append(b, st.ChainID...)
	b = append(b, st.SignBytes...)
	b = append(b, st.Signature...)
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, castagnoli))
}

// DecodeValue reads a value EncodeValue made for chainID. A value that is
// damaged, for another chain or not one of ours gives a
// *guard.CorruptError (its Path the key). The Guard checks the state
// further (that the sign bytes are a vote or proposal at the height,
// round and step recorded) before it signs from it.
func DecodeValue(b []byte, chainID, key string) (guard.State, error) {
	bad := func(format string, a ...any) (guard.State, error) {
		return guard.State{}, &guard.CorruptError{Path: key, Reason: fmt.Sprintf(format, a...)}
	}
	if len(b) < valueHeader+4 || string(b[:8]) != valueMagic {
		return bad("the value (%d bytes) is not a signerkit state", len(b))
	}
	body, crc := b[:len(b)-4], binary.LittleEndian.Uint32(b[len(b)-4:])
	if got := crc32.Checksum(body, castagnoli); got != crc {
		return bad("checksum mismatch (stored %08x, computed %08x)", crc, got)
	}
	nc, nb, ns := int(binary.LittleEndian.Uint16(b[25:])), int(binary.LittleEndian.Uint16(b[27:])), int(binary.LittleEndian.Uint16(b[29:]))
	if nc > guard.MaxChainIDLen || nb > guard.MaxSignBytes || ns > guard.MaxSignatureLen || valueHeader+nc+nb+ns != len(body) {
		return bad("field lengths %d/%d/%d do not fit a %d-byte value", nc, nb, ns, len(b))
	}
	st := guard.State{
		Height: int64(binary.LittleEndian.Uint64(b[8:])),
		Round:  int64(binary.LittleEndian.Uint64(b[16:])),
		Step:   int8(b[24]),
	}
	off := valueHeader
	st.ChainID = string(b[off : off+nc])
	off += nc
	if nb > 0 {
		st.SignBytes = bytes.Clone(b[off : off+nb])
	}
	off += nb
	if ns > 0 {
		st.Signature = bytes.Clone(b[off : off+ns])
	}
	if sum := sha256.Sum256(st.SignBytes); !bytes.Equal(sum[:], b[31:63]) {
		return bad("the sign bytes do not match their SHA-256")
	}
	if st.ChainID != chainID {
		return bad("the value is chain %q's, not %q's", st.ChainID, chainID)
	}
	if st.Height < 0 || st.Round < 0 || st.Step < 0 || st.Step > 3 || (st.Step == 0) != (nb == 0) || (nb == 0) != (ns == 0) {
		return bad("height %d, round %d, step %d with %d bytes of sign bytes and %d of signature", st.Height, st.Round, st.Step, nb, ns)
	}
	return st, nil
}
