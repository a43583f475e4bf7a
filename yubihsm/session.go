package yubihsm

import (
	"context"
	"crypto/cipher"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/certusone/yubihsm-go/commands"
	"github.com/certusone/yubihsm-go/securechannel"

	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/signer/signertrace"
)

// session is one authenticated SCP03 session: yubihsm-go's SecureChannel
// over our transport. It is used by one goroutine at a time (the pool
// hands it out).
type session struct {
	ch       *securechannel.SecureChannel
	conn     *conn
	lastUsed time.Time
	// ran is the channel state the device has if it ran the last command
	// although no answer came back; send left the channel as if it had
	// not (see send). Nil unless a command went unanswered.
	ran *channelState
	// block is S-ENC, to read answers yubihsm-go does not parse
	// (rawresp.go).
	block cipher.Block
}

type channelState struct {
	chain   []byte
	counter uint32
}

// link is what a Store and the Signers opened from it share: the transport
// and the derived authentication key, wiped when the last user closes.
type link struct {
	t         *transport
	authKeyID uint16
	cfg       Config

	mu   sync.Mutex
	key  []byte // K-ENC ‖ K-MAC; nil once wiped
	refs int
}

func (l *link) acquire() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.key == nil {
		return false
	}
	l.refs++
	return true
}

func (l *link) release() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.refs--; l.refs == 0 {
		clear(l.key)
		l.key = nil
		l.t.close()
	}
}

// openSession creates and authenticates a session (Create Session,
// Authenticate Session), in the caller's session stage.
func (l *link) openSession(ctx context.Context, tr *signertrace.Trace) (*session, error) {
	start := tr.Start()
	defer tr.Measured(signertrace.StageSession, start)
	l.mu.Lock()
	if l.key == nil {
		l.mu.Unlock()
		return nil, fmt.Errorf("yubihsm: %w", signer.ErrClosed)
	}
	authKey := append([]byte(nil), l.key...)
	l.mu.Unlock()
	c := &conn{t: l.t, call: call{ctx: ctx, tr: tr, stage: signertrace.StageSession}}
	// yubihsm-go takes the password as a string it cannot wipe and runs
	// PBKDF2 on it for every session; we give it an empty one and put our
	// own derived key in its exported AuthKey field instead.
	ch, err := securechannel.NewSecureChannel(c, l.authKeyID, "")
	if err != nil {
		clear(authKey)
		return nil, fmt.Errorf("yubihsm: new session: %w", err)
	}
	ch.AuthKey = authKey
	err = safely(ch.Authenticate)
	if err != nil {
		clear(authKey)
		return nil, sessionError(err, l.authKeyID)
	}
	block := sessionCipher(authKey, ch.HostChallenge, ch.DeviceChallenge)
	clear(authKey)
	c.sid, c.sidOK = ch.ID, true
	return &session{ch: ch, conn: c, lastUsed: time.Now(), block: block}, nil
}

// sessionError maps a failure to set up a session with authentication key
// authKeyID to a typed error.
func sessionError(err error, authKeyID uint16) error {
	var de *DeviceError
	switch {
	case errors.As(err, &de):
		if de.Code == CodeObjectNotFound {
			return wrap(err, "authentication key %04x not found", authKeyID)
		}
		return err
	case errors.Is(err, securechannel.ErrAuthCryptogram):
		return fmt.Errorf("yubihsm: the device's card cryptogram does not match: wrong password for authentication key %04x: %w", authKeyID, signer.ErrWrongPassphrase)
	case isTyped(err):
		return err
	}
	return &protocolError{"session setup: " + err.Error()}
}

// isTyped reports whether err already carries one of our types or a
// context error.
func isTyped(err error) bool {
	var de *DeviceError
	var te *transportError
	var pe *protocolError
	return errors.As(err, &de) || errors.As(err, &te) || errors.As(err, &pe) ||
		errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) ||
		errors.Is(err, signer.ErrMessageTooLarge)
}

// send runs one encrypted command. A nil error with a nil response is
// possible for commands without a response body.
func (s *session) send(c call, cmd *commands.CommandMessage) (commands.Response, error) {
	s.conn.call = c
	s.conn.answered = false
	before, chain := s.ch.Counter, s.ch.MACChainValue
	var resp commands.Response
	err := safely(func() error {
		var err error
		resp, err = s.ch.SendEncryptedCommand(cmd)
		return err
	})
	s.conn.call = call{}
	s.lastUsed = time.Now()
	if unknownResponse(err) && s.conn.answered && s.ch.Counter == before+1 {
		resp, err = s.readRaw(byte(cmd.CommandType), before)
	}
	if err != nil && s.conn.answered && s.ch.Counter == before {
		// An answer came back but yubihsm-go refused it before counting
		// it (a bad R-MAC, a garbled frame): the device has executed the
		// command and moved its counter on. Keep in step so that the
		// Close Session the pool sends next can still be read.
		s.ch.Counter++
	}
	if err != nil && !s.conn.answered {
		// No answer (a hung device, a connector gone): yubihsm-go has
		// moved the MAC chain on, but the device may never have seen the
		// command. Step back, so that the pool's Close Session can still
		// be read; closeSession tries the other state if the device
		// refuses it.
		s.ran = &channelState{chain: s.ch.MACChainValue, counter: before + 1}
		s.ch.MACChainValue = chain
	}
	if err != nil {
		err = deviceError(err, byte(cmd.CommandType))
		if !isTyped(err) {
			// yubihsm-go's own errors: a bad R-MAC, a response of the
			// wrong type, a refused counter.
			err = &protocolError{err.Error()}
		}
	}
	return resp, err
}

// reusable reports whether a session survives err: only refusals the
// device sent inside the session leave it in step.
func reusable(err error) bool {
	if err == nil {
		return true // before de, which escapes: no allocation on a sign that worked
	}
	var de *DeviceError
	return errors.As(err, &de) && de.Session
}

// safely runs f, turning a panic inside yubihsm-go into a protocol error.
func safely(f func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = &protocolError{fmt.Sprintf("yubihsm-go panicked: %v", r)}
		}
	}()
	return f()
}

// pool keeps up to n sessions for one Store or Signer, opening them when
// needed, replacing them before the channel's message limit, pinging idle
// ones within the device's idle timeout, and closing them on close.
type pool struct {
	l     *link
	slots chan *session // n entries; nil means "open one when needed"
	limit uint32

	closed atomic.Bool
	stop   chan struct{}
	wg     sync.WaitGroup // keepalive and background closes
}

func newPool(l *link, n int) *pool {
	p := &pool{l: l, slots: make(chan *session, n), stop: make(chan struct{}), limit: l.cfg.messageLimit()}
	for range n {
		p.slots <- nil
	}
	if ka := l.cfg.keepAlive(); ka > 0 {
		p.wg.Add(1)
		go p.keepAlive(ka)
	}
	return p
}

var errPoolClosed = fmt.Errorf("yubihsm: %w", signer.ErrClosed)

// do runs one command on a pooled session: it waits for a free session
// within ctx, opens or rotates it as needed, and if the device says the
// session is gone (INVALID SESSION or AUTHENTICATION FAILED on the outer
// frame) opens a new one and retries once.
func (p *pool) do(ctx context.Context, cmd func() (*commands.CommandMessage, error)) (commands.Response, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("yubihsm: %w", err)
	}
	if p.closed.Load() {
		return nil, errPoolClosed
	}
	tr := signertrace.ContextTrace(ctx)
	var s *session
	select {
	case s = <-p.slots:
	case <-ctx.Done():
		return nil, fmt.Errorf("yubihsm: waiting for a session: %w", ctx.Err())
	}
	if p.closed.Load() {
		p.slots <- s
		return nil, errPoolClosed
	}
	defer func() { p.slots <- s }()
	for attempt := 0; ; attempt++ {
		var err error
		if s, err = p.ready(ctx, tr, s); err != nil {
			return nil, err
		}
		m, err := cmd()
		if err != nil {
			// yubihsm-go refused to encode the command (a label too long,
			// say), which the callers check beforehand.
			return nil, fmt.Errorf("yubihsm: encode command: %v: %w", err, signer.ErrInvalidArgument)
		}
		resp, err := s.send(call{ctx: ctx, tr: tr, stage: signertrace.StageTransport}, m)
		if reusable(err) {
			return resp, err
		}
		p.discard(s)
		s = nil
		if attempt == 0 && isCode(err, CodeInvalidSession, CodeAuthenticationFailed) {
			tr.Add(signertrace.CountRetries, 1)
			continue
		}
		return nil, err
	}
}

// ready returns s, or a new session when s is nil or near its message
// limit.
func (p *pool) ready(ctx context.Context, tr *signertrace.Trace, s *session) (*session, error) {
	if s != nil && s.ch.Counter < p.limit {
		return s, nil
	}
	fresh, err := p.l.openSession(ctx, tr)
	if err != nil {
		// Past the rotation point but short of yubihsm-go's hard limit,
		// the old session still works: keep it rather than fail a sign.
		if s != nil && s.ch.Counter < securechannel.MaxMessagesPerSession-1 && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
			return s, nil
		}
		p.discard(s)
		return nil, err
	}
	p.discard(s) // a nil s is nothing to discard
	return fresh, nil
}

// discard closes a session in the background, best effort: a session that
// is out of step or unreachable expires on the device after 30 s anyway.
func (p *pool) discard(s *session) {
	if s == nil {
		return
	}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		p.closeSession(s)
	}()
}

func (p *pool) closeSession(s *session) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	m, _ := commands.CreateCloseSessionCommand()
	ran := s.ran
	if _, err := s.send(call{ctx: ctx}, m); ran != nil && isCode(err, CodeAuthenticationFailed) {
		// The device refused the MAC: it did run the unanswered command.
		s.ch.MACChainValue, s.ch.Counter = ran.chain, ran.counter
		s.send(call{ctx: ctx}, m)
	}
	s.ch.AuthKey = nil
}

// keepAlive pings idle sessions with Echo so the device does not expire
// them (docs/protocols.md B.5: 30 s of inactivity).
func (p *pool) keepAlive(every time.Duration) {
	defer p.wg.Done()
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			return
		case <-t.C:
		}
		for range cap(p.slots) {
			var s *session
			select {
			case s = <-p.slots:
			default:
				continue // in use: it is not idle
			}
			select {
			case <-p.stop:
				// Close has begun: a ping it cut short would leave the
				// session out of step, and unclosable.
				p.slots <- s
				return
			default:
			}
			if s != nil && time.Since(s.lastUsed) >= every/2 {
				s = p.ping(s)
			}
			p.slots <- s
		}
	}
}

var keepalivePayload = []byte("signerkit keepalive")

// pingGrace is how long Close lets a ping in flight finish before cutting
// it short: a ping cut short leaves its session out of step (the client's
// MAC chain has moved on, the device's may not have), so Close could not
// close it and the device would hold the slot until its idle timeout.
const pingGrace = 500 * time.Millisecond

func (p *pool) ping(s *session) *session {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	go func() {
		select {
		case <-p.stop:
			t := time.NewTimer(pingGrace)
			defer t.Stop()
			select {
			case <-t.C:
				cancel()
			case <-ctx.Done():
			}
		case <-ctx.Done():
		}
	}()
	m, _ := commands.CreateEchoCommand(keepalivePayload)
	resp, err := s.send(call{ctx: ctx}, m)
	if e, ok := resp.(*commands.EchoResponse); err == nil && ok && string(e.Data) == string(keepalivePayload) {
		return s
	}
	p.discard(s)
	return nil
}

// close waits for commands in flight, closes every session and stops the
// keepalive.
func (p *pool) close() {
	if p.closed.Swap(true) {
		return
	}
	close(p.stop)
	for range cap(p.slots) {
		if s := <-p.slots; s != nil {
			p.closeSession(s)
		}
	}
	p.wg.Wait()
	// Callers that were waiting for a session get one, see the pool
	// closed, and give it back.
	for range cap(p.slots) {
		p.slots <- nil
	}
}
