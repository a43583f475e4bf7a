package ed25519sign

// burnSize is how much of the stack below a signing call burnStack
// overwrites: more than the deepest frames of a sign (setSeed then sign,
// in filippo.io/edwards25519 v1.2.0 and this package about 3.2 KiB on
// amd64; TestStackDepth measures it and fails past 7 KiB).
const burnSize = 8 << 10

// burnStack overwrites the burnSize bytes of stack below its caller's
// frame with zeros. Called before a sign it also grows the goroutine's
// stack to that depth, so the sign itself does not move the stack (which
// would free the old one with the secrets on it, unwiped).
//
//go:noinline
func burnStack() {
	var b [burnSize]byte
	sink(&b)
}

// sink keeps the compiler from dropping the zeroing of b: it may read
// all of it.
//
//go:noinline
func sink(b *[burnSize]byte) byte { return b[0] }
