package secretconn

import (
	"encoding/binary"
	"math/bits"
)

// keccakRC are the round constants of Keccak-f[1600] (FIPS 202, 3.2.5).
var keccakRC = [24]uint64{
	0x0000000000000001, 0x0000000000008082, 0x800000000000808a, 0x8000000080008000,
	0x000000000000808b, 0x0000000080000001, 0x8000000080008081, 0x8000000000008009,
	0x000000000000008a, 0x0000000000000088, 0x0000000080008009, 0x000000008000000a,
	0x000000008000808b, 0x800000000000008b, 0x8000000000008089, 0x8000000000008003,
	0x8000000000008002, 0x8000000000000080, 0x000000000000800a, 0x800000008000000a,
	0x8000000080008081, 0x8000000000008080, 0x0000000080000001, 0x8000000080008008,
}

// keccakRho and keccakPi walk the 24 non-origin lanes along the pi
// permutation's single cycle starting at lane 1, with the rho rotation each
// lane gets on the way (FIPS 202, 3.2.2 and 3.2.3, lanes indexed x+5y).
var (
	keccakRho = [24]int{1, 3, 6, 10, 15, 21, 28, 36, 45, 55, 2, 14, 27, 41, 56, 8, 25, 43, 62, 18, 39, 61, 20, 44}
	keccakPi  = [24]int{10, 7, 11, 17, 18, 3, 5, 16, 8, 21, 24, 4, 15, 23, 19, 13, 12, 2, 20, 14, 22, 9, 6, 1}
)

// keccakF1600 applies the Keccak-f[1600] permutation to a 200-byte state
// whose lanes are little-endian, as STROBE and SHA-3 lay them out. It runs a
// handful of times per handshake, so it is written for clarity, not speed.
func keccakF1600(st *[200]byte) {
	var a [25]uint64
	for i := range a {
		a[i] = binary.LittleEndian.Uint64(st[8*i:])
	}
	for _, rc := range keccakRC {
		// theta
		var c [5]uint64
		for x := 0; x < 5; x++ {
			c[x] = a[x] ^ a[x+5] ^ a[x+10] ^ a[x+15] ^ a[x+20]
		}
		for x := 0; x < 5; x++ {
			d := c[(x+4)%5] ^ bits.RotateLeft64(c[(x+1)%5], 1)
			for y := 0; y < 25; y += 5 {
				a[y+x] ^= d
			}
		}
		// rho and pi
		t := a[1]
		for i, j := range keccakPi {
			t, a[j] = a[j], bits.RotateLeft64(t, keccakRho[i])
		}
		// chi
		for y := 0; y < 25; y += 5 {
			var b [5]uint64
			copy(b[:], a[y:y+5])
			for x := 0; x < 5; x++ {
				a[y+x] = b[x] ^ (^b[(x+1)%5] & b[(x+2)%5])
			}
		}
		// iota
		a[0] ^= rc
	}
	for i := range a {
		binary.LittleEndian.PutUint64(st[8*i:], a[i])
	}
}
