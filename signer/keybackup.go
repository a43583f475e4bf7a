package signer

import "context"

// Abilities of a key store for backups: keys made to leave the device only
// encrypted, and the encrypted copies themselves. Like the interfaces in
// keys.go, callers find them by type assertion on a Store.

// ExportableKeyGenerator generates a key, as KeyGenerator does, that the
// device lets out encrypted under one of its wrap keys (KeyWrapper), and
// never in the clear. Keys from KeyGenerator cannot leave the device at
// all, where the device can tell the two apart.
type ExportableKeyGenerator interface {
	GenerateExportableKey(ctx context.Context, alg Algorithm, label string) (KeyInfo, error)
}

// KeyWrapper exports a key encrypted under a wrap key that the store
// holds, and imports such an export back, into the same store or another
// holding the same wrap key. The wrapped form is the device's own, opaque
// to the caller; ImportWrapped restores the key with its label, id and
// permissions as the device recorded them. A key that may not leave the
// device fails with an error wrapping ErrPermissionDenied; a wrapped key
// that does not decrypt under wrap (another wrap key, damaged data) fails
// with one wrapping ErrInvalidKey.
type KeyWrapper interface {
	ExportWrapped(ctx context.Context, key, wrap KeyRef) ([]byte, error)
	ImportWrapped(ctx context.Context, wrapped []byte, wrap KeyRef) (KeyInfo, error)
}
