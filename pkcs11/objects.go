//go:build cgo

package pkcs11

import (
	"context"
	"crypto"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"sort"

	p11 "github.com/miekg/pkcs11"

	"github.com/signerkit/signerkit/signer"
)

// keyObject is a private key found on the token, with what a Signer needs.
type keyObject struct {
	handle  p11.ObjectHandle
	keyType uint
	label   string
	id      []byte
	alg     signer.Algorithm // the one its type implies
	pub     crypto.PublicKey
}

func (k *keyObject) info() signer.KeyInfo {
	return signer.KeyInfo{Label: k.label, ID: hexID(k.id), Algorithm: k.alg, Public: k.pub}
}

// findObjects returns the handles of the objects that match tmpl.
func findObjects(ctx *p11.Ctx, sh p11.SessionHandle, tmpl []*p11.Attribute) ([]p11.ObjectHandle, error) {
	if err := ctx.FindObjectsInit(sh, tmpl); err != nil {
		return nil, wrap("C_FindObjectsInit", err)
	}
	var all []p11.ObjectHandle
	for {
		hs, _, err := ctx.FindObjects(sh, 64)
		if err != nil {
			ctx.FindObjectsFinal(sh)
			return nil, wrap("C_FindObjects", err)
		}
		all = append(all, hs...)
		if len(hs) < 64 {
			break
		}
	}
	if err := ctx.FindObjectsFinal(sh); err != nil {
		return nil, wrap("C_FindObjectsFinal", err)
	}
	return all, nil
}

// attr reads one attribute; a missing one (CKR_ATTRIBUTE_TYPE_INVALID) is
// nil without error. miekg/pkcs11 fails a whole C_GetAttributeValue when
// one attribute is missing, so optional ones are read alone.
func attr(ctx *p11.Ctx, sh p11.SessionHandle, o p11.ObjectHandle, typ uint) ([]byte, error) {
	as, err := ctx.GetAttributeValue(sh, o, []*p11.Attribute{p11.NewAttribute(typ, nil)})
	if code, ok := ckr(err); ok && (code == p11.CKR_ATTRIBUTE_TYPE_INVALID || code == p11.CKR_ATTRIBUTE_SENSITIVE) {
		return nil, nil
	}
	if err != nil {
		return nil, wrap("C_GetAttributeValue", err)
	}
	return as[0].Value, nil
}

func ulong(b []byte) (uint, bool) {
	// CK_ULONG in host byte order, as miekg/pkcs11 hands it back.
	switch len(b) {
	case 8:
		return uint(binary.NativeEndian.Uint64(b)), true
	case 4:
		return uint(binary.NativeEndian.Uint32(b)), true
	}
	return 0, false
}

// loadKey reads a private key object and its public half.
func loadKey(ctx *p11.Ctx, sh p11.SessionHandle, h p11.ObjectHandle) (*keyObject, error) {
	kt, err := attr(ctx, sh, h, p11.CKA_KEY_TYPE)
	if err != nil {
		return nil, err
	}
	keyType, ok := ulong(kt)
	if !ok {
		return nil, fmt.Errorf("pkcs11: private key without a CKA_KEY_TYPE: %w", signer.ErrInvalidKey)
	}
	k := &keyObject{handle: h, keyType: keyType}
	label, err := attr(ctx, sh, h, p11.CKA_LABEL)
	if err != nil {
		return nil, err
	}
	k.label = string(label)
	if k.id, err = attr(ctx, sh, h, p11.CKA_ID); err != nil {
		return nil, err
	}
	switch keyType {
	case p11.CKK_RSA:
		k.alg = signer.RSAPKCS1v15
		n, err := attr(ctx, sh, h, p11.CKA_MODULUS)
		if err != nil {
			return nil, err
		}
		e, err := attr(ctx, sh, h, p11.CKA_PUBLIC_EXPONENT)
		if err != nil {
			return nil, err
		}
		if len(n) == 0 || len(e) == 0 {
			if n, e, err = rsaFromPublicObject(ctx, sh, k); err != nil {
				return nil, err
			}
		}
		pub, err := rsaPublic(n, e)
		if err != nil {
			return nil, err
		}
		k.pub = pub
		if pssHint(ctx, sh, k) {
			k.alg = signer.RSAPSS
		}
	case p11.CKK_EC, ckkECEdwards:
		params, err := attr(ctx, sh, h, p11.CKA_EC_PARAMS)
		if err != nil {
			return nil, err
		}
		if k.alg, err = parseECParams(params); err != nil {
			return nil, err
		}
		if (k.alg == signer.Ed25519) != (keyType == ckkECEdwards) {
			return nil, fmt.Errorf("pkcs11: key type %#x with %v parameters: %w", keyType, k.alg, signer.ErrInvalidKey)
		}
		point, err := publicObjectAttr(ctx, sh, k, p11.CKA_EC_POINT)
		if err != nil {
			return nil, err
		}
		if k.pub, err = parseECPoint(k.alg, point); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("pkcs11: key type %#x: %w", keyType, signer.ErrUnsupported)
	}
	return k, nil
}

// publicTemplate finds k's public key object: same key type and CKA_ID,
// or the same label when the key has no ID.
func publicTemplate(k *keyObject) []*p11.Attribute {
	tmpl := []*p11.Attribute{
		p11.NewAttribute(p11.CKA_CLASS, p11.CKO_PUBLIC_KEY),
		p11.NewAttribute(p11.CKA_KEY_TYPE, k.keyType),
	}
	if len(k.id) > 0 {
		return append(tmpl, p11.NewAttribute(p11.CKA_ID, k.id))
	}
	return append(tmpl, p11.NewAttribute(p11.CKA_LABEL, k.label))
}

// publicObjectAttr reads an attribute of k's public key object: the EC
// point is not an attribute of EC private keys.
func publicObjectAttr(ctx *p11.Ctx, sh p11.SessionHandle, k *keyObject, typ uint) ([]byte, error) {
	hs, err := findObjects(ctx, sh, publicTemplate(k))
	if err != nil {
		return nil, err
	}
	for _, h := range hs {
		v, err := attr(ctx, sh, h, typ)
		if err != nil {
			return nil, err
		}
		if len(v) > 0 {
			return v, nil
		}
	}
	return nil, fmt.Errorf("pkcs11: key %q id %s has no public key object to read its public key from: %w",
		k.label, hexID(k.id), signer.ErrInvalidKey)
}

func rsaFromPublicObject(ctx *p11.Ctx, sh p11.SessionHandle, k *keyObject) (n, e []byte, err error) {
	if n, err = publicObjectAttr(ctx, sh, k, p11.CKA_MODULUS); err != nil {
		return nil, nil, err
	}
	if e, err = publicObjectAttr(ctx, sh, k, p11.CKA_PUBLIC_EXPONENT); err != nil {
		return nil, nil, err
	}
	return n, e, nil
}

// refTemplate is the search template of the private key ref names.
func refTemplate(ref signer.KeyRef) ([]*p11.Attribute, error) {
	tmpl := []*p11.Attribute{p11.NewAttribute(p11.CKA_CLASS, p11.CKO_PRIVATE_KEY)}
	if ref.Label == "" && ref.ID == "" {
		return nil, fmt.Errorf("pkcs11: a key is named by label, id or both: %w", signer.ErrInvalidArgument)
	}
	if ref.Label != "" {
		tmpl = append(tmpl, p11.NewAttribute(p11.CKA_LABEL, ref.Label))
	}
	if ref.ID != "" {
		id, err := hex.DecodeString(ref.ID)
		if err != nil {
			return nil, fmt.Errorf("pkcs11: key id %q is not hex: %w", truncate(ref.ID), signer.ErrInvalidArgument)
		}
		tmpl = append(tmpl, p11.NewAttribute(p11.CKA_ID, id))
	}
	return tmpl, nil
}

// findKey finds the one private key ref names.
func (t *Store) findKey(ctx context.Context, ref signer.KeyRef, st *opStats) (*keyObject, error) {
	tmpl, err := refTemplate(ref)
	if err != nil {
		return nil, err
	}
	var k *keyObject
	err = t.pool.do(ctx, st, func(sh p11.SessionHandle) error {
		// Private keys are invisible to a session that is not logged in.
		if err := t.pool.ensureLogin(sh, st); err != nil {
			return err
		}
		hs, err := findObjects(t.pool.mod.ctx, sh, tmpl)
		if err != nil {
			return err
		}
		switch len(hs) {
		case 0:
			hint := ""
			if t.pool.pin == nil {
				hint = " (no PIN was given, and tokens hide private keys until a login)"
			}
			return fmt.Errorf("pkcs11: token %q has no private key %v%s: %w", t.label, ref, hint, signer.ErrKeyNotFound)
		case 1:
		default:
			return fmt.Errorf("pkcs11: token %q has %d private keys %v; name one by id: %w", t.label, len(hs), ref, signer.ErrInvalidArgument)
		}
		k, err = loadKey(t.pool.mod.ctx, sh, hs[0])
		return err
	})
	if err != nil {
		return nil, err
	}
	return k, nil
}

// ListKeys lists the private keys on the token that this package can sign
// with, sorted by label (then id). Keys of other types or curves are left
// out.
func (t *Store) ListKeys(ctx context.Context) ([]signer.KeyInfo, error) {
	if err := t.checkOpen(); err != nil {
		return nil, err
	}
	var out []signer.KeyInfo
	err := t.pool.do(ctx, &opStats{}, func(sh p11.SessionHandle) error {
		out = out[:0]
		hs, err := findObjects(t.pool.mod.ctx, sh, []*p11.Attribute{p11.NewAttribute(p11.CKA_CLASS, p11.CKO_PRIVATE_KEY)})
		if err != nil {
			return err
		}
		for _, h := range hs {
			k, err := loadKey(t.pool.mod.ctx, sh, h)
			if _, isCK := ckr(err); isCK {
				return err
			}
			if err == nil {
				out = append(out, k.info())
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Label != out[j].Label {
			return out[i].Label < out[j].Label
		}
		return out[i].ID < out[j].ID
	})
	return out, nil
}
