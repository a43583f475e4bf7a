package pkcs11

// Internals that the external tests exercise directly.
var (
	ParseECParams  = parseECParams
	ParseECPoint   = parseECPoint
	MarshalECPoint = marshalECPoint
	RawToASN1      = rawToASN1
	DigestInfoFor  = digestInfoFor
	RSAPublic      = rsaPublic
	CopyPublic     = copyPublic
)

// SessionDead reports whether the pool drops a session on code.
var SessionDead = sessionDead

// CKMEdDSA is CKM_EDDSA, for tests that call C_SignInit themselves.
const CKMEdDSA = ckmEdDSA
