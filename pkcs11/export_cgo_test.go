//go:build cgo

package pkcs11

// LoadedModules returns the modules loaded now and their users.
func LoadedModules() map[string]int {
	modulesMu.Lock()
	defer modulesMu.Unlock()
	out := map[string]int{}
	for path, m := range modules {
		out[path] = m.refs
	}
	return out
}

// Hang makes every operation on t block before it reaches the token, as on
// a token that stopped answering, until release is called.
func (t *Token) Hang() (release func()) {
	ch := make(chan struct{})
	t.pool.hang.Store(&ch)
	return func() {
		t.pool.hang.Store(nil)
		close(ch)
	}
}

// IdleSessions returns the handles of the pool's idle sessions.
func (t *Token) IdleSessions() []uint {
	t.pool.mu.Lock()
	defer t.pool.mu.Unlock()
	out := make([]uint, len(t.pool.idle))
	for i, sh := range t.pool.idle {
		out[i] = uint(sh)
	}
	return out
}

// BusySessions returns the number of sessions checked out of the pool.
func (t *Token) BusySessions() int {
	t.pool.mu.Lock()
	defer t.pool.mu.Unlock()
	return t.pool.busy
}
