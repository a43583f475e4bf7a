//go:build cgo

package pkcs11

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	p11 "github.com/miekg/pkcs11"

	"github.com/signerkit/signerkit/internal/backoff"
	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/signer/signertrace"
)

// pool holds the sessions of one opened token: at most cap(slots) at once,
// idle ones kept for the next caller. A session that dies (the token closed
// it, was unplugged, or someone called C_CloseAllSessions) is dropped with
// every idle one that died with it (see drop), and the operation is
// retried on a new session, within the bound do sets.
//
// The login state is the token's, not a session's: PKCS#11 logs every
// session of the application in at once, and logs them all out when the
// last one closes. So a new session is checked (C_GetSessionInfo) and the
// pool logs in when it is not, and an operation that meets
// CKR_USER_NOT_LOGGED_IN logs in and is retried, as often as the token
// forgets the login while the operation's context has time left.
type pool struct {
	mod   *module
	slot  uint
	token string        // the token's label, for errors
	pin   signer.Secret // the user PIN; nil means no login
	slots chan struct{} // a token is taken from it per checked-out session

	loginMu sync.Mutex // one C_Login at a time
	pinErr  error      // set once the token refused the PIN; guarded by loginMu
	// logins counts the pool's logins. A login means the token had
	// forgotten the last one, and modules may forget the handles of
	// private objects with it (SoftHSM2 does), so Signers look their handle
	// up again when it moved.
	logins atomic.Uint64

	// faults is set, by tests only, when the Store is opened (see
	// Config.faults) and never changed after; nil in every other pool.
	faults *faults

	openMu sync.Mutex // held to open a session, and by drop

	mu     sync.Mutex
	idle   []p11.SessionHandle
	busy   int  // sessions checked out
	closed bool // no more checkouts; the last session back releases mod
}

func newPool(mod *module, slot uint, token string, pin signer.Secret, size int) *pool {
	return &pool{mod: mod, slot: slot, token: token, pin: pin, slots: make(chan struct{}, size)}
}

// opStats is what one operation spent, reported to the caller's trace only
// when the operation returns to it (never after it gave up waiting).
type opStats struct {
	timed   bool // take durations (a trace listens)
	session time.Duration
	device  time.Duration
	trips   int64
	retries int64
}

func (s *opStats) start() time.Time {
	if !s.timed {
		return time.Time{}
	}
	return time.Now()
}

func (s *opStats) since(t time.Time) time.Duration {
	if t.IsZero() {
		return 0
	}
	return time.Since(t)
}

func (s *opStats) report(tr *signertrace.Trace) {
	if s.timed {
		if s.session > 0 {
			tr.MeasuredDuration(signertrace.StageSession, s.session)
		}
		if s.device > 0 {
			tr.MeasuredDuration(signertrace.StageDevice, s.device)
		}
	}
	if s.trips > 0 {
		tr.Add(signertrace.CountRoundTrips, s.trips)
	}
	if s.retries > 0 {
		tr.Add(signertrace.CountRetries, s.retries)
	}
}

// get checks out a session, opening and logging in a new one when no idle
// one is left. It waits for a free slot within ctx.
func (p *pool) get(ctx context.Context, st *opStats) (p11.SessionHandle, error) {
	select {
	case p.slots <- struct{}{}:
	default:
		select {
		case p.slots <- struct{}{}:
		case <-ctx.Done():
			return 0, fmt.Errorf("pkcs11: waiting for a session of token %q: %w", p.token, ctx.Err())
		}
	}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		<-p.slots
		return 0, fmt.Errorf("pkcs11: token %q: %w", p.token, signer.ErrClosed)
	}
	p.busy++
	if n := len(p.idle); n > 0 {
		sh := p.idle[n-1]
		p.idle = p.idle[:n-1]
		p.mu.Unlock()
		return sh, nil
	}
	p.mu.Unlock()
	sh, err := p.open(st)
	if err != nil {
		p.done()
		return 0, err
	}
	return sh, nil
}

// open opens a session and logs the token in if it is not.
func (p *pool) open(st *opStats) (p11.SessionHandle, error) {
	p.openMu.Lock()
	sh, err := p.mod.ctx.OpenSession(p.slot, p11.CKF_SERIAL_SESSION|p11.CKF_RW_SESSION)
	st.trips++
	if code, _ := ckr(err); code == p11.CKR_TOKEN_WRITE_PROTECTED {
		// A read-only token (some smartcards) still signs; key generation,
		// import and deletion will fail with ErrPermissionDenied.
		sh, err = p.mod.ctx.OpenSession(p.slot, p11.CKF_SERIAL_SESSION)
		st.trips++
	}
	p.openMu.Unlock()
	if err != nil {
		return 0, wrap("C_OpenSession", err)
	}
	if err := p.ensureLogin(sh, st); err != nil {
		if code, _ := ckr(err); !sessionDead(code) {
			// A dead one's handle may be a new session's by now.
			p.mod.ctx.CloseSession(sh)
		}
		return 0, err
	}
	return sh, nil
}

// loggedIn reports whether the user is logged in, as sh sees it.
func loggedIn(ctx *p11.Ctx, sh p11.SessionHandle) bool {
	info, err := ctx.GetSessionInfo(sh)
	return err == nil && (info.State == p11.CKS_RO_USER_FUNCTIONS || info.State == p11.CKS_RW_USER_FUNCTIONS)
}

// ensureLogin logs the token in through sh unless it is logged in. The
// state is read under loginMu, so sessions opened at once log in once.
func (p *pool) ensureLogin(sh p11.SessionHandle, st *opStats) error {
	if p.pin == nil {
		return nil
	}
	p.loginMu.Lock()
	defer p.loginMu.Unlock()
	info, err := p.mod.ctx.GetSessionInfo(sh)
	st.trips++
	if err != nil {
		return wrap("C_GetSessionInfo", err)
	}
	if info.State == p11.CKS_RO_USER_FUNCTIONS || info.State == p11.CKS_RW_USER_FUNCTIONS {
		return nil
	}
	return p.loginLocked(sh, st)
}

// loginLocked calls C_Login with the PIN; loginMu is held. A PIN the
// token refused is remembered and returned from then on without asking the
// token again, so that a wrong PIN cannot lock it.
func (p *pool) loginLocked(sh p11.SessionHandle, st *opStats) error {
	if p.pinErr != nil {
		return p.pinErr
	}
	if p.pin == nil {
		return fmt.Errorf("pkcs11: token %q needs a login and no PIN was given: %w", p.token, signer.ErrPermissionDenied)
	}
	pin, err := p.pin()
	if err != nil {
		return fmt.Errorf("pkcs11: token %q: getting the PIN: %w", p.token, err)
	}
	err = p.mod.ctx.Login(sh, p11.CKU_USER, string(pin))
	clear(pin)
	st.trips++
	code, _ := ckr(err)
	switch {
	case err == nil:
		p.logins.Add(1)
		return nil
	case code == p11.CKR_USER_ALREADY_LOGGED_IN:
		return nil
	case pinRefused(code):
		p.pinErr = &PINError{Code: code, Token: p.token}
		return p.pinErr
	}
	return wrap("C_Login", err)
}

// put returns a healthy session to the pool.
func (p *pool) put(sh p11.SessionHandle) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		p.mod.ctx.CloseSession(sh)
		p.done()
		return
	}
	p.idle = append(p.idle, sh)
	p.mu.Unlock()
	p.done()
}

// discard closes a live session that cannot be trusted with another
// operation.
func (p *pool) discard(sh p11.SessionHandle) {
	p.mod.ctx.CloseSession(sh)
	p.done()
}

// drop forgets a session the module said is gone, without closing it:
// modules may reuse a dead session's handle for the next session opened,
// which a late C_CloseSession would then close. The idle sessions most
// likely died with it (a C_CloseAllSessions, a token pulled out); each is
// asked for its state, closed if it still answers and forgotten if not.
// openMu keeps new sessions from opening meanwhile, so no handle checked
// here can be a new session's.
func (p *pool) drop(sh p11.SessionHandle) {
	p.openMu.Lock()
	p.mu.Lock()
	idle := p.idle
	p.idle = nil
	p.mu.Unlock()
	for _, s := range idle {
		if _, err := p.mod.ctx.GetSessionInfo(s); err == nil {
			p.mod.ctx.CloseSession(s)
		}
	}
	p.openMu.Unlock()
	p.done()
}

// done ends a checkout; the last one after close releases the module.
func (p *pool) done() {
	p.mu.Lock()
	p.busy--
	last := p.closed && p.busy == 0
	p.mu.Unlock()
	<-p.slots
	if last {
		p.mod.release()
	}
}

// close closes the idle sessions and stops checkouts. The module is
// released now, or when the last session in use comes back (a sign that
// its caller gave up on still runs in the module).
func (p *pool) close() {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	p.closed = true
	idle := p.idle
	p.idle = nil
	last := p.busy == 0
	p.mu.Unlock()
	for _, s := range idle {
		p.mod.ctx.CloseSession(s)
	}
	if last {
		p.mod.release()
	}
}

// failedIn reports whether err is the module's error from the call op.
func failedIn(err error, op string) bool {
	var e *Error
	return errors.As(err, &e) && e.Op == op
}

// maxRetriesNoDeadline bounds the retries of an operation whose context
// has no deadline: it is tried at most 1+maxRetriesNoDeadline times in all,
// whatever failed. One whose context has a deadline is retried until it
// ends.
const maxRetriesNoDeadline = 32

// maxGeneralErrors is how many tries of an operation may fail with
// CKR_GENERAL_ERROR in a way a logout does not explain (see try); the
// operation fails with the last of them.
const maxGeneralErrors = 4

// maxBackoff is the longest pause between two retries.
const maxBackoff = 50 * time.Millisecond

// do runs op on a checked-out session, with the pool's recovery, until op
// succeeds, fails for a reason that retrying cannot mend, or runs out of
// retries. It is the only retry loop of an operation: a dead session is
// dropped and op retried on a new one (which logs in if the token forgot
// the login); CKR_USER_NOT_LOGGED_IN logs in and retries; an error op
// wraps in retryError (a key handle the module forgot) is retried; a
// refused PIN never is. The first retry is immediate, later ones back off
// (up to maxBackoff), while ctx has time left: until its deadline, or
// maxRetriesNoDeadline retries when it has none. The checkout and those
// logins count as session time; op times what it does itself.
func (p *pool) do(ctx context.Context, st *opStats, op func(p11.SessionHandle) error) error {
	general := 0
	wait := backoff.Backoff{Min: time.Millisecond, Max: maxBackoff}
	for retries := 0; ; retries++ {
		var retry bool
		var err error
		if p.faults == nil {
			retry, err = p.try(ctx, st, op)
		} else {
			retry, err = p.faults.try(p, ctx, st, op)
		}
		if err == nil {
			return nil
		}
		if code, _ := ckr(err); retry && code == p11.CKR_GENERAL_ERROR {
			general++
			retry = general < maxGeneralErrors
		}
		if !retry || !pause(ctx, retries, &wait) {
			return err
		}
		st.retries++
	}
}

// pause waits before retry number n+1 and reports whether to make it: not
// when ctx ended, nor after maxRetriesNoDeadline when ctx has no deadline.
// The first retry is immediate; later ones wait wait.Next() (1 ms,
// doubling up to maxBackoff).
func pause(ctx context.Context, n int, wait *backoff.Backoff) bool {
	if ctx.Err() != nil {
		return false
	}
	if _, ok := ctx.Deadline(); !ok && n >= maxRetriesNoDeadline {
		return false
	}
	return n == 0 || wait.Sleep(ctx)
}

// retryError is an error an operation returns to have the pool retry it:
// the operation mended what went wrong (a Signer marked its key handle
// stale) and another try may succeed. The pool returns err, unwrapped,
// when it gives up.
type retryError struct{ err error }

func (e *retryError) Error() string { return e.err.Error() }
func (e *retryError) Unwrap() error { return e.err }

// faults is what a test injects into a pool's operations
// (export_cgo_test.go): a gate they hold for reading while in the module,
// and a hang they wait on before running.
type faults struct {
	gate sync.RWMutex
	hang atomic.Pointer[chan struct{}]
}

// try is pool.try with the faults in place.
func (f *faults) try(p *pool, ctx context.Context, st *opStats, op func(p11.SessionHandle) error) (bool, error) {
	f.gate.RLock()
	defer f.gate.RUnlock()
	return p.try(ctx, st, func(sh p11.SessionHandle) error {
		if h := f.hang.Load(); h != nil {
			<-*h
		}
		return op(sh)
	})
}

// retryable reports whether an error of opening or logging in a session
// may go away on another try: the session died under it (closed by someone
// else), or the login went. A token that is gone, a refused PIN and any
// other error may not.
func retryable(err error) bool {
	var pe *PINError
	if errors.As(err, &pe) {
		return false
	}
	code, ok := ckr(err)
	if !ok {
		return false
	}
	switch code {
	case p11.CKR_SESSION_HANDLE_INVALID, p11.CKR_SESSION_CLOSED, p11.CKR_USER_NOT_LOGGED_IN:
		return true
	}
	return false
}

// try runs op once on a checked-out session and says whether its error
// may be retried.
func (p *pool) try(ctx context.Context, st *opStats, op func(p11.SessionHandle) error) (retry bool, err error) {
	t := st.start()
	sh, err := p.get(ctx, st)
	st.session += st.since(t)
	if err != nil {
		return retryable(err), err
	}
	logins := p.logins.Load()
	err = op(sh)
	if err == nil {
		p.put(sh)
		return false, nil
	}
	// An error op asks to retry is handled as any other error would be,
	// then retried.
	var asked bool
	if r, ok := err.(*retryError); ok {
		err, asked = r.err, true
	}
	code, _ := ckr(err)
	if code == p11.CKR_GENERAL_ERROR && p.pin != nil && (failedIn(err, "C_SignInit") || failedIn(err, "C_FindObjectsInit") || failedIn(err, "C_FindObjects")) {
		// A call that met a logout can fail so in SoftHSM2 (the key
		// cannot be decrypted any more). When the login is gone or
		// changed, log in and retry as for CKR_USER_NOT_LOGGED_IN;
		// else retry a few times (do counts them).
		if p.logins.Load() != logins || !loggedIn(p.mod.ctx, sh) {
			code = p11.CKR_USER_NOT_LOGGED_IN
		} else {
			p.put(sh)
			return true, err
		}
	}
	switch {
	case sessionDead(code):
		p.drop(sh)
		return true, err
	case code == p11.CKR_USER_NOT_LOGGED_IN && p.pin != nil:
		t = st.start()
		lerr := p.ensureLogin(sh, st)
		st.session += st.since(t)
		if failedIn(err, "C_Sign") {
			// Its operation may still be active, as below. Closing
			// the session after the login may log the token out (it
			// was the last); the retry's new session logs in again.
			p.discard(sh)
		} else if c, _ := ckr(lerr); sessionDead(c) {
			p.drop(sh)
		} else {
			p.put(sh)
		}
		if lerr != nil {
			return retryable(lerr), lerr
		}
		return true, err
	case code == p11.CKR_OPERATION_ACTIVE:
		// Left over from an operation the module did not end: the
		// session cannot be trusted with the next one. It is closed
		// and the operation retried on another, as the caller did
		// nothing wrong.
		p.discard(sh)
		return true, err
	case failedIn(err, "C_Sign"):
		// Possibly left active: PKCS#11 (v2.40 §5.11, v3.0 §5.13)
		// says a failed C_Sign ends its operation, but modules do
		// not all do it (SoftHSM2 2.6 keeps it after
		// CKR_ARGUMENTS_BAD). The session is closed rather than
		// trusted with the next sign.
		p.discard(sh)
	default:
		p.put(sh)
	}
	return asked, err
}
