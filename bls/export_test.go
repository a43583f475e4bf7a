package bls

// SecretBytesForTest returns the scalar as the Signer holds it, even after
// Close, so that tests can see that Close wiped it.
func SecretBytesForTest(s *Signer) []byte {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.sk.appendBytes(nil)
}
