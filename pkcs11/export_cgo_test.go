//go:build cgo

package pkcs11

import (
	"context"
	"sync"
	"testing"

	p11 "github.com/miekg/pkcs11"
)

// LoadedModules returns the modules loaded now, by the path each was
// first loaded through, and their users.
func LoadedModules() map[string]int {
	modulesMu.Lock()
	defer modulesMu.Unlock()
	out := map[string]int{}
	for _, m := range modules {
		out[m.path] = m.refs
	}
	return out
}

// WithFaults makes the Store opened with c take the faults Hang and Gate
// inject; Stores opened otherwise have none on their path.
func WithFaults(c *Config) { c.faults = true }

// faults returns t's faults, and fails the test binary when t was opened
// without WithFaults.
func (t *Store) faults() *faults {
	if t.pool.faults == nil {
		panic("pkcs11: Hang and Gate need a Store opened with WithFaults")
	}
	return t.pool.faults
}

// Hang makes every operation on t block before it reaches the token, as on
// a token that stopped answering, until release is called. t must have
// been opened WithFaults.
func (t *Store) Hang() (release func()) {
	f := t.faults()
	ch := make(chan struct{})
	f.hang.Store(&ch)
	return func() {
		f.hang.Store(nil)
		close(ch)
	}
}

// Gate returns the lock every operation on t holds for reading while it is
// in the module; a test holding it for writing may then close t's
// sessions behind its back without SoftHSM2 freeing a session another
// thread is signing on. t must have been opened WithFaults.
func (t *Store) Gate() *sync.RWMutex { return &t.faults().gate }

// IdleSessions returns the handles of the pool's idle sessions.
func (t *Store) IdleSessions() []uint {
	t.pool.mu.Lock()
	defer t.pool.mu.Unlock()
	out := make([]uint, len(t.pool.idle))
	for i, sh := range t.pool.idle {
		out[i] = uint(sh)
	}
	return out
}

// BusySessions returns the number of sessions checked out of the pool.
func (t *Store) BusySessions() int {
	t.pool.mu.Lock()
	defer t.pool.mu.Unlock()
	return t.pool.busy
}

// SignViaMiekg makes k sign through miekg/pkcs11's SignInit and Sign
// rather than its own direct calls, for tests of that path. Call it
// before k signs.
func (k *Signer) SignViaMiekg() { k.path = miekgPath{} }

// mangled passes the signatures of path through f.
type mangled struct {
	path signPath
	f    func([]byte) []byte
}

func (m mangled) sign(k *Signer, sh p11.SessionHandle, h p11.ObjectHandle, req request, st *opStats) ([]byte, error) {
	sig, err := m.path.sign(k, sh, h, req, st)
	if err == nil {
		sig = m.f(sig)
	}
	return sig, err
}

// MangleSignatures makes every signature the token returns to k pass
// through f first, as from a faulty or hostile token; nil undoes it. Call
// it between signs.
func (k *Signer) MangleSignatures(f func([]byte) []byte) {
	if m, ok := k.path.(mangled); ok {
		k.path = m.path
	}
	if f != nil {
		k.path = mangled{k.path, f}
	}
}

// CreateObject runs C_CreateObject with attrs on a session of t's pool.
func (t *Store) CreateObject(ctx context.Context, attrs []*p11.Attribute) error {
	return t.pool.do(ctx, &opStats{}, func(sh p11.SessionHandle) error {
		_, err := t.pool.mod.ctx.CreateObject(sh, attrs)
		return err
	})
}

// DestroyObjects destroys the objects that match tmpl and returns how many.
func (t *Store) DestroyObjects(ctx context.Context, tmpl []*p11.Attribute) (int, error) {
	n := 0
	err := t.pool.do(ctx, &opStats{}, func(sh p11.SessionHandle) error {
		hs, err := findObjects(t.pool.mod.ctx, sh, tmpl)
		if err != nil {
			return err
		}
		for _, h := range hs {
			if err := t.pool.mod.ctx.DestroyObject(sh, h); err != nil {
				return err
			}
			n++
		}
		return nil
	})
	return n, err
}

// DirectSign reports whether k's module signs through direct calls.
func (k *Signer) DirectSign() bool {
	path := k.path
	if m, ok := path.(mangled); ok {
		path = m.path
	}
	_, ok := path.(directPath)
	return ok
}

// SignRaw runs C_SignInit(mech) and C_Sign(data) through the pool as a
// sign does, giving the direct path a buffer of sigLen bytes.
func (k *Signer) SignRaw(ctx context.Context, mech uint, data []byte, sigLen int) ([]byte, error) {
	return k.run(ctx, request{mech: mech, data: data, sigLen: sigLen})
}

// ModuleLocking returns the mutexes t's module was initialized with.
func (t *Store) ModuleLocking() Locking { return t.pool.mod.locking }

// SpinMutexSelfTest runs the module mutexes from threads C threads, each
// adding 1 to a shared counter iters times under one mutex.
func SpinMutexSelfTest(threads int, iters int64) (count int64, rv uint) {
	return mutexSelfTest(threads, iters)
}

// SpinLockingSupported says whether LockingSpin works in this build.
const SpinLockingSupported = spinLockingSupported

// SpinMutexCounts returns how many of signerkit's module mutexes modules
// have created and destroyed in this process.
func SpinMutexCounts() (created, destroyed int64) { return spinMutexCounts() }

// Do runs op on a session of t's pool with the recovery a sign gets
// (a retry on a new session, a login), passing it the session handle.
func (t *Store) Do(ctx context.Context, op func(sh uint) error) error {
	return t.pool.do(ctx, &opStats{}, func(sh p11.SessionHandle) error { return op(uint(sh)) })
}

// TestWrapMechanismPad: the value the export format checks is the
// mechanism ExportWrapped wraps with.
func TestWrapMechanismPad(t *testing.T) {
	if WrapMechanism != wrapMechanismPad {
		t.Fatalf("WrapMechanism %#x, wrapMechanismPad %#x", WrapMechanism, wrapMechanismPad)
	}
}
