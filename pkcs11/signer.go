//go:build cgo

package pkcs11

import (
	"context"
	"crypto"
	"crypto/rsa"
	"fmt"
	"io"
	"sync"
	"sync/atomic"

	p11 "github.com/miekg/pkcs11"

	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/signer/signertrace"
)

// Signer is a private key on a PKCS#11 token, opened by Open or
// Store.OpenKey. It is safe for concurrent use: each sign checks a session
// out of the token's pool, so up to Config.PoolSize signs run on the token
// at once and the rest wait.
type Signer struct {
	tok   *Store
	alg   signer.Algorithm
	pub   crypto.PublicKey
	label string
	id    []byte

	handleMu sync.Mutex
	ko       *keyObject // its handle refreshed if the module forgets it
	logins   uint64     // the pool's login count when ko.handle was found
	stale    bool       // the module refused ko.handle

	closed    atomic.Bool
	closeOnce sync.Once

	// path makes the module calls of a sign: directPath, or miekgPath
	// when the module's function list could not be read. Chosen by
	// newSigner; tests may replace it before they sign.
	path signPath
}

var _ signer.AlgorithmSigner = (*Signer)(nil)

func newSigner(t *Store, ko *keyObject, alg signer.Algorithm) *Signer {
	k := &Signer{tok: t, alg: alg, pub: ko.pub, label: ko.label, id: ko.id, ko: ko, logins: t.pool.logins.Load(), path: miekgPath{}}
	if t.pool.mod.funcs != nil {
		k.path = directPath{}
	}
	return k
}

// Public returns a copy of the public key read when the Signer was opened
// (an ed25519.PublicKey, *ecdsa.PublicKey or *rsa.PublicKey): changing it
// changes nothing for the Signer or other callers.
func (k *Signer) Public() crypto.PublicKey { return copyPublic(k.pub) }

// Algorithm returns the algorithm SignContext uses.
func (k *Signer) Algorithm() signer.Algorithm { return k.alg }

// Info describes the key: its label, its CKA_ID in hex, the algorithm the
// Signer uses and a copy of its public key.
func (k *Signer) Info() signer.KeyInfo {
	return signer.KeyInfo{Label: k.label, ID: hexID(k.id), Algorithm: k.alg, Public: copyPublic(k.pub)}
}

// Close releases the Signer and, with the last user of the token, its
// sessions and module: for a Signer from Open, that is all Open acquired.
// Signs in flight finish; later ones fail with signer.ErrClosed. Close is
// idempotent.
func (k *Signer) Close() error {
	k.closeOnce.Do(func() {
		k.closed.Store(true)
		k.tok.release()
	})
	return nil
}

// SignContext signs msg (hashing it first for ECDSA and RSA) and returns
// the signature in the wire form of k.Algorithm(): 64 bytes for Ed25519,
// r‖s for ECDSA, as long as the modulus for RSA. A signature of another
// length from the token is refused with an error wrapping
// signer.ErrProtocol.
func (k *Signer) SignContext(ctx context.Context, msg []byte) ([]byte, error) {
	switch k.alg {
	case signer.Ed25519:
		return k.checked(k.run(ctx, request{mech: ckmEdDSA, data: msg}))
	case signer.ECDSAP256, signer.ECDSAP384:
		sig, err := k.run(ctx, request{mech: p11.CKM_ECDSA, data: k.alg.Digest(msg)})
		if err != nil {
			return nil, err
		}
		if err := checkRaw(k.alg, sig); err != nil {
			return nil, err
		}
		return sig, nil
	case signer.RSAPKCS1v15:
		di, err := digestInfoFor(crypto.SHA256, k.alg.Digest(msg))
		if err != nil {
			return nil, err
		}
		return k.checked(k.run(ctx, request{mech: p11.CKM_RSA_PKCS, data: di}))
	case signer.RSAPSS:
		req, err := k.pssRequest(crypto.SHA256, 32, k.alg.Digest(msg))
		if err != nil {
			return nil, err
		}
		return k.checked(k.run(ctx, req))
	}
	return nil, fmt.Errorf("pkcs11: %v: %w", k.alg, signer.ErrUnsupported)
}

// Sign implements crypto.Signer. For Ed25519, digest is the message
// (opts.HashFunc() must be 0; Ed25519ph and Ed25519ctx are refused with
// signer.ErrUnsupported). For ECDSA it signs the digest and returns ASN.1
// DER. For RSA it signs PKCS #1 v1.5, or PSS when opts is *rsa.PSSOptions
// (rsa.PSSSaltLengthAuto means a salt as long as the hash), whichever
// scheme the Signer was opened for. rand is ignored: the token draws its own.
// Sign takes no context: it gives up after Config.SignTimeout
// (DefaultSignTimeout) with an error wrapping context.DeadlineExceeded.
func (k *Signer) Sign(_ io.Reader, digest []byte, opts crypto.SignerOpts) ([]byte, error) {
	if err := signer.CheckSignerOpts(k.alg, digest, opts); err != nil {
		return nil, fmt.Errorf("pkcs11: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), k.tok.signTimeout)
	defer cancel()
	switch k.alg {
	case signer.Ed25519:
		return k.checked(k.run(ctx, request{mech: ckmEdDSA, data: digest}))
	case signer.ECDSAP256, signer.ECDSAP384:
		raw, err := k.run(ctx, request{mech: p11.CKM_ECDSA, data: digest})
		if err != nil {
			return nil, err
		}
		return rawToASN1(k.alg, raw)
	}
	h := opts.HashFunc()
	if o, ok := opts.(*rsa.PSSOptions); ok {
		salt := o.SaltLength
		if salt == rsa.PSSSaltLengthAuto || salt == rsa.PSSSaltLengthEqualsHash {
			salt = h.Size()
		}
		req, err := k.pssRequest(h, salt, digest)
		if err != nil {
			return nil, err
		}
		return k.checked(k.run(ctx, req))
	}
	di, err := digestInfoFor(h, digest)
	if err != nil {
		return nil, err
	}
	return k.checked(k.run(ctx, request{mech: p11.CKM_RSA_PKCS, data: di}))
}

// checked passes on an Ed25519 or RSA signature from the token if it has
// the length k's signatures have (64 bytes; the modulus's), and refuses
// it with an error wrapping signer.ErrProtocol if not. (ECDSA signatures
// are checked by checkRaw.)
func (k *Signer) checked(sig []byte, err error) ([]byte, error) {
	if err != nil {
		return nil, err
	}
	if want := k.sigLen(); len(sig) != want {
		return nil, fmt.Errorf("pkcs11: token %q returned a %d-byte %v signature, want %d: %w", k.tok.label, len(sig), k.alg, want, signer.ErrProtocol)
	}
	return sig, nil
}

// pssHashes maps a hash to its PKCS#11 mechanism and MGF1 variant.
var pssHashes = map[crypto.Hash][2]uint{
	crypto.SHA224: {p11.CKM_SHA224, p11.CKG_MGF1_SHA224},
	crypto.SHA256: {p11.CKM_SHA256, p11.CKG_MGF1_SHA256},
	crypto.SHA384: {p11.CKM_SHA384, p11.CKG_MGF1_SHA384},
	crypto.SHA512: {p11.CKM_SHA512, p11.CKG_MGF1_SHA512},
}

func (k *Signer) pssRequest(h crypto.Hash, salt int, digest []byte) (request, error) {
	hm, ok := pssHashes[h]
	if !ok {
		return request{}, fmt.Errorf("pkcs11: RSA-PSS with %v: %w", h, signer.ErrUnsupported)
	}
	pub := k.pub.(*rsa.PublicKey)
	emLen := (pub.N.BitLen() - 1 + 7) / 8
	if salt < 0 || salt > emLen-h.Size()-2 {
		return request{}, fmt.Errorf("pkcs11: RSA-PSS salt length %d does not fit a %d-bit key: %w", salt, pub.N.BitLen(), signer.ErrInvalidArgument)
	}
	return request{mech: p11.CKM_RSA_PKCS_PSS, param: p11.NewPSSParams(hm[0], hm[1], uint(salt)), data: digest}, nil
}

// request is one C_SignInit + C_Sign.
type request struct {
	mech  uint
	param []byte
	data  []byte
	// sigLen is the buffer the direct path gives C_Sign; 0 means the
	// length of k's signatures (Signer.sigLen).
	sigLen int
}

// run signs req on a pooled session within ctx. A context that can end
// runs the token calls on a goroutine, so the caller gets its error at
// the deadline even if the token hangs; the session goes back to the pool
// when the token answers. Stages reach the caller's trace only when the
// sign returns to it.
func (k *Signer) run(ctx context.Context, req request) ([]byte, error) {
	if k.closed.Load() {
		return nil, fmt.Errorf("pkcs11: key %q: %w", k.label, signer.ErrClosed)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("pkcs11: sign: %w", err)
	}
	tr := signertrace.ContextTrace(ctx)
	st := &opStats{timed: tr != nil && tr.StageDone != nil}
	if ctx.Done() == nil {
		sig, err := k.sign(ctx, req, st)
		st.report(tr)
		return sig, err
	}
	type result struct {
		sig []byte
		err error
	}
	ch := make(chan result, 1)
	go func() {
		sig, err := k.sign(ctx, req, st)
		ch <- result{sig, err}
	}()
	select {
	case r := <-ch:
		st.report(tr)
		return r.sig, r.err
	case <-ctx.Done():
		select {
		case r := <-ch: // finished as the context ended: keep the work
			st.report(tr)
			return r.sig, r.err
		default:
		}
		return nil, fmt.Errorf("pkcs11: sign on token %q: %w", k.tok.label, ctx.Err())
	}
}

// sign makes the signature through the pool, which replaces dead sessions
// and logs in again as needed. The key's object handle is looked up again
// after a login (modules may forget private handles on logout) or when
// the module says it is invalid; the pool retries the sign then, within
// its one bound on retries (see pool.do).
func (k *Signer) sign(ctx context.Context, req request, st *opStats) ([]byte, error) {
	p := k.tok.pool
	var sig []byte
	misses := 0 // lookups that found no key with nothing to explain it
	err := p.do(ctx, st, func(sh p11.SessionHandle) error {
		h, err := k.handle(sh, st, &misses)
		if err != nil {
			return err
		}
		sig, err = k.path.sign(k, sh, h, req, st)
		if code, _ := ckr(err); code == p11.CKR_KEY_HANDLE_INVALID || code == p11.CKR_OBJECT_HANDLE_INVALID {
			// The handle went between its lookup and the sign (a
			// logout and login between them): look it up again.
			k.handleMu.Lock()
			k.stale = true
			k.handleMu.Unlock()
			return &retryError{err}
		}
		return err
	})
	if err == nil {
		return sig, nil
	}
	if k.closed.Load() {
		return nil, fmt.Errorf("pkcs11: key %q: %w (%s)", k.label, signer.ErrClosed, unprefixed(err))
	}
	return nil, err
}

// signPath makes the C_SignInit and C_Sign of a sign with key h on sh.
type signPath interface {
	sign(k *Signer, sh p11.SessionHandle, h p11.ObjectHandle, req request, st *opStats) ([]byte, error)
}

// directPath calls the module's C_SignInit and C_Sign from its function
// list, in one call from Go.
type directPath struct{}

func (directPath) sign(k *Signer, sh p11.SessionHandle, h p11.ObjectHandle, req request, st *opStats) ([]byte, error) {
	t := st.start()
	n := req.sigLen
	if n == 0 {
		n = k.sigLen()
	}
	sig, calls, err := k.tok.pool.mod.funcs.sign(sh, req.mech, req.param, h, req.data, n)
	st.device += st.since(t)
	st.trips += calls // C_SignInit, C_Sign, a second C_Sign
	return sig, err
}

// miekgPath signs through miekg/pkcs11.
type miekgPath struct{}

func (miekgPath) sign(k *Signer, sh p11.SessionHandle, h p11.ObjectHandle, req request, st *opStats) ([]byte, error) {
	ctx := k.tok.pool.mod.ctx
	mech := []*p11.Mechanism{p11.NewMechanism(req.mech, nilIfEmpty(req.param))}
	t := st.start()
	st.trips++
	if err := ctx.SignInit(sh, mech, h); err != nil {
		st.device += st.since(t)
		return nil, wrap("C_SignInit", err)
	}
	sig, err := ctx.Sign(sh, req.data)
	st.device += st.since(t)
	st.trips += 2 // miekg/pkcs11 asks for the length, then signs
	return sig, wrap("C_Sign", err)
}

// sigLen is the length of k's signatures: 64 bytes for Ed25519 and
// P-256, 96 for P-384, the modulus's for RSA.
func (k *Signer) sigLen() int {
	switch pub := k.pub.(type) {
	case *rsa.PublicKey:
		return pub.Size()
	}
	switch k.alg {
	case signer.ECDSAP384:
		return 96
	}
	return 64
}

// keyLookups is how many lookups in a row must find no key, with nothing
// to explain it, before a Signer's key is missing.
const keyLookups = 3

// handle returns the key's object handle, looking it up again through sh
// when the pool logged in since it was found or the module refused it.
// The lookup counts as session time. A lookup that meets a logout finds no
// private key (or, in SoftHSM2, fails with CKR_GENERAL_ERROR, which the
// pool retries) though the key is there. So a lookup that finds none is
// retried (the next try's ensureLogin logs in if the login went) until
// keyLookups of them (counted in *misses) found none; the key is missing
// if the token stayed logged in, without a login, throughout the last,
// and if not the count starts again once the pool logged in. Each try of
// a sign makes at most one lookup.
func (k *Signer) handle(sh p11.SessionHandle, st *opStats, misses *int) (p11.ObjectHandle, error) {
	p := k.tok.pool
	k.handleMu.Lock()
	defer k.handleMu.Unlock()
	if !k.stale && k.logins == p.logins.Load() {
		return k.ko.handle, nil
	}
	t := st.start()
	defer func() { st.session += st.since(t) }()
	tmpl, err := refTemplate(signer.KeyRef{Label: k.label, ID: hexID(k.id)})
	if err != nil {
		return 0, err
	}
	if err := p.ensureLogin(sh, st); err != nil {
		return 0, err
	}
	logins := p.logins.Load()
	hs, err := findObjects(p.mod.ctx, sh, tmpl)
	st.trips += 3
	if err != nil {
		return 0, err // the pool retries what a logout explains
	}
	if len(hs) == 0 {
		if *misses++; *misses < keyLookups {
			return 0, &retryError{fmt.Errorf("pkcs11: key %q id %s: no matching key on the token now: %w", k.label, hexID(k.id), signer.ErrKeyNotFound)}
		}
		// The last lookup decides, so only it asks whether the token
		// stayed logged in (ensureLogin asked before it).
		if p.pin != nil {
			st.trips++
			if p.logins.Load() != logins || !loggedIn(p.mod.ctx, sh) {
				*misses = 0
				return 0, &Error{Op: "C_FindObjects", Code: p11.CKR_USER_NOT_LOGGED_IN}
			}
		}
	}
	if len(hs) != 1 {
		return 0, fmt.Errorf("pkcs11: key %q id %s: %d matching keys on the token now: %w", k.label, hexID(k.id), len(hs), signer.ErrKeyNotFound)
	}
	k.ko.handle, k.logins, k.stale = hs[0], logins, false
	return hs[0], nil
}

// nilIfEmpty keeps miekg/pkcs11 from passing a zero-length parameter
// where the mechanism takes none.
func nilIfEmpty(b []byte) any {
	if len(b) == 0 {
		return nil
	}
	return b
}
