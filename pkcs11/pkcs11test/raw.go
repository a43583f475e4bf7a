//go:build cgo

package pkcs11test

import (
	"encoding/binary"
	"errors"
	"fmt"

	p11 "github.com/miekg/pkcs11"
)

// cgoBuild reports whether this build can load PKCS#11 modules.
const cgoBuild = true

// Raw is a bare github.com/miekg/pkcs11 session on the token, logged in,
// with nothing of package pkcs11 around it: the baseline its benchmarks are
// measured against. It is not safe for concurrent use.
type Raw struct {
	ctx  *p11.Ctx
	sh   p11.SessionHandle
	key  p11.ObjectHandle
	mech uint // the plain mechanism of the key's type
	owns bool // this Raw initialized the module, so it finalizes it
}

// CKK_EC_EDWARDS and CKM_EDDSA, from PKCS#11 3.0, which miekg/pkcs11 v1.1.1
// does not define.
const (
	ckkECEdwards = 0x00000040
	ckmEdDSA     = 0x00001057
)

// OpenRaw loads the module with miekg/pkcs11, opens a session on the token,
// logs in and finds the private key labelled label, an Ed25519, EC or RSA
// key. SOFTHSM2_CONF must
// point at the token (see Env). If package pkcs11 has the module loaded
// already, the Raw shares it, and its login, and leaves it initialized.
func (tok *Token) OpenRaw(label string) (*Raw, error) {
	ctx := p11.New(tok.Module)
	if ctx == nil {
		return nil, fmt.Errorf("pkcs11test: loading %s failed", tok.Module)
	}
	r := &Raw{ctx: ctx, owns: true}
	if err := ctx.Initialize(); errors.Is(err, p11.Error(p11.CKR_CRYPTOKI_ALREADY_INITIALIZED)) {
		r.owns = false
	} else if err != nil {
		ctx.Destroy()
		return nil, fmt.Errorf("pkcs11test: C_Initialize: %w", err)
	}
	if err := r.open(tok, label); err != nil {
		r.Close()
		return nil, err
	}
	return r, nil
}

func (r *Raw) open(tok *Token, label string) error {
	slots, err := r.ctx.GetSlotList(true)
	if err != nil {
		return fmt.Errorf("pkcs11test: C_GetSlotList: %w", err)
	}
	for _, s := range slots {
		info, err := r.ctx.GetTokenInfo(s)
		if err != nil || info.Label != tok.Label {
			continue
		}
		if r.sh, err = r.ctx.OpenSession(s, p11.CKF_SERIAL_SESSION); err != nil {
			return fmt.Errorf("pkcs11test: C_OpenSession: %w", err)
		}
		if err := r.ctx.Login(r.sh, p11.CKU_USER, tok.PIN); err != nil && !errors.Is(err, p11.Error(p11.CKR_USER_ALREADY_LOGGED_IN)) {
			return fmt.Errorf("pkcs11test: C_Login: %w", err)
		}
		tmpl := []*p11.Attribute{
			p11.NewAttribute(p11.CKA_CLASS, p11.CKO_PRIVATE_KEY),
			p11.NewAttribute(p11.CKA_LABEL, label),
		}
		if err := r.ctx.FindObjectsInit(r.sh, tmpl); err != nil {
			return fmt.Errorf("pkcs11test: C_FindObjectsInit: %w", err)
		}
		hs, _, err := r.ctx.FindObjects(r.sh, 2)
		r.ctx.FindObjectsFinal(r.sh)
		if err != nil || len(hs) != 1 {
			return fmt.Errorf("pkcs11test: key %q: %d found, %v", label, len(hs), err)
		}
		r.key = hs[0]
		as, err := r.ctx.GetAttributeValue(r.sh, r.key, []*p11.Attribute{p11.NewAttribute(p11.CKA_KEY_TYPE, nil)})
		if err != nil {
			return fmt.Errorf("pkcs11test: key %q: CKA_KEY_TYPE: %w", label, err)
		}
		var kt uint64
		switch v := as[0].Value; len(v) {
		case 8:
			kt = binary.NativeEndian.Uint64(v)
		case 4:
			kt = uint64(binary.NativeEndian.Uint32(v))
		}
		switch kt {
		case ckkECEdwards:
			r.mech = ckmEdDSA
		case p11.CKK_EC:
			r.mech = p11.CKM_ECDSA
		case p11.CKK_RSA:
			r.mech = p11.CKM_RSA_PKCS
		default:
			return fmt.Errorf("pkcs11test: key %q has key type %#x, not Ed25519, EC or RSA", label, kt)
		}
		return nil
	}
	return fmt.Errorf("pkcs11test: no token %q", tok.Label)
}

// Sign calls C_SignInit and C_Sign on data with the plain mechanism of the
// key's type, without parameters: CKM_EDDSA for an Ed25519 key (data is
// the message), CKM_ECDSA for an EC key (data is the digest, the signature
// r‖s) and CKM_RSA_PKCS for an RSA key (data is the DigestInfo to pad and
// sign).
func (r *Raw) Sign(data []byte) ([]byte, error) {
	if err := r.ctx.SignInit(r.sh, []*p11.Mechanism{p11.NewMechanism(r.mech, nil)}, r.key); err != nil {
		return nil, fmt.Errorf("pkcs11test: C_SignInit: %w", err)
	}
	sig, err := r.ctx.Sign(r.sh, data)
	if err != nil {
		return nil, fmt.Errorf("pkcs11test: C_Sign: %w", err)
	}
	return sig, nil
}

// Close closes the session and unloads the module, finalizing it if this
// Raw initialized it.
func (r *Raw) Close() error {
	if r.sh != 0 {
		r.ctx.CloseSession(r.sh)
	}
	if r.owns {
		r.ctx.Finalize()
	}
	r.ctx.Destroy()
	return nil
}
