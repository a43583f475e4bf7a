package refsecp256k1

import "math/big"

// VerifyLowS checks the signature (r, s), each 32 bytes big-endian, of
// hash under the SEC 1 encoded public key pub, and that s is low (s ≤
// n/2), as Cosmos and gno require.
func VerifyLowS(pub, hash, r, s []byte) bool {
	x, y, err := ParsePublicKey(pub)
	if err != nil || len(r) != orderBytes || len(s) != orderBytes {
		return false
	}
	rr, ss := new(big.Int).SetBytes(r), new(big.Int).SetBytes(s)
	return Verify(x, y, hash, rr, ss) && IsLowS(ss)
}
