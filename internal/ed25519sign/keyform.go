package ed25519sign

// NewKeyFromSeed returns crypto/ed25519's form of the key of seed,
// seed‖public key, as ed25519.NewKeyFromSeed does but without leaving the
// expanded key or the seed's SHA-512 behind: the key is expanded as SetSeed
// does, into a PrivateKey on the stack that is wiped before the call
// returns. The caller wipes the result.
func NewKeyFromSeed(seed []byte) ([]byte, error) {
	var k PrivateKey
	defer k.Wipe()
	if err := k.SetSeed(seed); err != nil {
		return nil, err
	}
	return k.AppendPrivateKey(make([]byte, 0, PrivateKeySize)), nil
}

// CheckPrivateKey checks that priv, crypto/ed25519's form seed‖public key,
// is 64 bytes and that its public half is the one its seed gives,
// expanding the key as NewKeyFromSeed does (nothing of it is left behind).
func CheckPrivateKey(priv []byte) error {
	var k PrivateKey
	defer k.Wipe()
	return k.SetPrivateKey(priv)
}
