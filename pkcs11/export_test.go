package pkcs11

// Internals that the external tests exercise directly.
var (
	ParseECParams  = parseECParams
	ParseECPoint   = parseECPoint
	MarshalECPoint = marshalECPoint
	RawToASN1      = rawToASN1
	DigestInfoFor  = digestInfoFor
)

// SessionDead reports whether the pool drops a session on code.
var SessionDead = sessionDead
