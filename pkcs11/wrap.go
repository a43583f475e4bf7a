//go:build cgo

package pkcs11

import (
	"context"
	"crypto/rand"
	"fmt"

	p11 "github.com/miekg/pkcs11"

	"github.com/signerkit/signerkit/signer"
)

// Backups under wrap: an AES wrap key made on the token, keys made
// exportable (CKA_EXTRACTABLE, still CKA_SENSITIVE), and C_WrapKey /
// C_UnwrapKey with CKM_AES_KEY_WRAP_PAD (RFC 5649), which SoftHSM2 and
// most HSMs implement for private keys. Ed25519, P-256 and P-384 keys.

var (
	_ signer.ExportableKeyGenerator = (*Store)(nil)
	_ signer.KeyWrapper             = (*Store)(nil)
)

// WrapMechanism is the mechanism ExportWrapped wraps with.
const WrapMechanism = p11.CKM_AES_KEY_WRAP_PAD

// GenerateExportableKey is GenerateKey for a key that ExportWrapped can
// back up: CKA_EXTRACTABLE, and still CKA_SENSITIVE, so that it leaves
// the token only encrypted.
func (t *Store) GenerateExportableKey(ctx context.Context, alg signer.Algorithm, label string) (signer.KeyInfo, error) {
	return t.Generate(ctx, KeySpec{Algorithm: alg, Label: label, Exportable: true})
}

// GenerateWrapKey makes a 256-bit AES key on the token that can wrap and
// unwrap keys and never leaves it (sensitive, not extractable), under
// label, with a random 8-byte CKA_ID, which it returns.
func (t *Store) GenerateWrapKey(ctx context.Context, label string) ([]byte, error) {
	return t.makeWrapKey(ctx, label, nil)
}

// PutWrapKey stores key (16, 24 or 32 bytes) as an AES wrap key on the
// token, as GenerateWrapKey makes one, so that two tokens given the same
// key restore each other's exports. It returns the new CKA_ID.
func (t *Store) PutWrapKey(ctx context.Context, label string, key []byte) ([]byte, error) {
	if n := len(key); n != 16 && n != 24 && n != 32 {
		return nil, fmt.Errorf("pkcs11: an AES wrap key of %d bytes: want 16, 24 or 32: %w", n, signer.ErrInvalidArgument)
	}
	return t.makeWrapKey(ctx, label, key)
}

// makeWrapKey generates a wrap key on the token, or stores key.
func (t *Store) makeWrapKey(ctx context.Context, label string, key []byte) ([]byte, error) {
	if err := t.checkOpen(); err != nil {
		return nil, err
	}
	if label == "" {
		return nil, fmt.Errorf("pkcs11: a wrap key needs a label: %w", signer.ErrInvalidArgument)
	}
	id := make([]byte, 8)
	rand.Read(id)
	tmpl := []*p11.Attribute{
		p11.NewAttribute(p11.CKA_CLASS, p11.CKO_SECRET_KEY),
		p11.NewAttribute(p11.CKA_KEY_TYPE, p11.CKK_AES),
		p11.NewAttribute(p11.CKA_TOKEN, true),
		p11.NewAttribute(p11.CKA_PRIVATE, true),
		p11.NewAttribute(p11.CKA_SENSITIVE, true),
		p11.NewAttribute(p11.CKA_EXTRACTABLE, false),
		p11.NewAttribute(p11.CKA_WRAP, true),
		p11.NewAttribute(p11.CKA_UNWRAP, true),
		p11.NewAttribute(p11.CKA_LABEL, label),
		p11.NewAttribute(p11.CKA_ID, id),
	}
	err := t.pool.do(ctx, &opStats{}, func(sh p11.SessionHandle) error {
		if err := t.pool.ensureLogin(sh, &opStats{}); err != nil {
			return err
		}
		taken, err := findObjects(t.pool.mod.ctx, sh, []*p11.Attribute{p11.NewAttribute(p11.CKA_LABEL, label)})
		if err != nil {
			return err
		}
		if len(taken) > 0 {
			return fmt.Errorf("pkcs11: token %q already has an object labelled %q: %w", t.label, label, signer.ErrKeyExists)
		}
		if key != nil {
			v := append(tmpl, p11.NewAttribute(p11.CKA_VALUE, key))
			_, err = t.pool.mod.ctx.CreateObject(sh, v)
			clear(v[len(v)-1].Value) // miekg/pkcs11's copy
			return wrap("C_CreateObject", err)
		}
		gen := append(tmpl, p11.NewAttribute(p11.CKA_VALUE_LEN, 32))
		_, err = t.pool.mod.ctx.GenerateKey(sh, []*p11.Mechanism{p11.NewMechanism(p11.CKM_AES_KEY_GEN, nil)}, gen)
		return wrap("C_GenerateKey", err)
	})
	if err != nil {
		return nil, err
	}
	return id, nil
}

// wrapKey finds the one AES key ref names that may wrap (or unwrap).
func (t *Store) wrapKey(sh p11.SessionHandle, ref signer.KeyRef, use uint) (p11.ObjectHandle, error) {
	tmpl := []*p11.Attribute{p11.NewAttribute(p11.CKA_CLASS, p11.CKO_SECRET_KEY), p11.NewAttribute(use, true)}
	ptmpl, err := refTemplate(ref)
	if err != nil {
		return 0, err
	}
	tmpl = append(tmpl, ptmpl[1:]...) // its label and id, without the private-key class
	hs, err := findObjects(t.pool.mod.ctx, sh, tmpl)
	if err != nil {
		return 0, err
	}
	switch len(hs) {
	case 0:
		return 0, fmt.Errorf("pkcs11: token %q has no wrap key %v that may %s (make one with keys generate -algorithm aes-wrap): %w",
			t.label, ref, map[uint]string{p11.CKA_WRAP: "wrap", p11.CKA_UNWRAP: "unwrap"}[use], signer.ErrKeyNotFound)
	case 1:
		return hs[0], nil
	}
	return 0, fmt.Errorf("pkcs11: %d wrap keys match %v; name it by id: %w", len(hs), ref, signer.ErrInvalidArgument)
}

// ExportWrapped wraps the private key key names under the AES wrap key
// wrapRef names (C_WrapKey, CKM_AES_KEY_WRAP_PAD) and returns it with its
// label, id and public key. A key that is not extractable — every key
// GenerateKey and ImportKey make — fails with an error wrapping
// signer.ErrPermissionDenied.
func (t *Store) ExportWrapped(ctx context.Context, key, wrapRef signer.KeyRef) ([]byte, error) {
	if err := t.checkOpen(); err != nil {
		return nil, err
	}
	key.Algorithm = 0
	ko, err := t.findKey(ctx, key, &opStats{})
	if err != nil {
		return nil, err
	}
	if ko.alg != signer.Ed25519 && ko.alg != signer.ECDSAP256 && ko.alg != signer.ECDSAP384 {
		return nil, fmt.Errorf("pkcs11: exporting %v keys under wrap: %w", ko.alg, signer.ErrUnsupported)
	}
	point, err := marshalECPoint(ko.pub)
	if err != nil {
		return nil, err
	}
	w := &wrappedKey{alg: ko.alg, mech: WrapMechanism, label: ko.label, id: ko.id, point: point}
	err = t.pool.do(ctx, &opStats{}, func(sh p11.SessionHandle) error {
		wh, err := t.wrapKey(sh, wrapRef, p11.CKA_WRAP)
		if err != nil {
			return err
		}
		w.wrapped, err = t.pool.mod.ctx.WrapKey(sh, []*p11.Mechanism{p11.NewMechanism(WrapMechanism, nil)}, wh, ko.handle)
		switch code, _ := ckr(err); code {
		case p11.CKR_KEY_UNEXTRACTABLE:
			return fmt.Errorf("pkcs11: key %q may not leave the token (it is not extractable: keys generate makes exportable keys only with -exportable): %w", ko.label, signer.ErrPermissionDenied)
		case p11.CKR_KEY_NOT_WRAPPABLE:
			// SoftHSM2 2.6.1 wraps EC keys but no Edwards keys.
			return fmt.Errorf("pkcs11: token %q cannot wrap %v keys (CKR_KEY_NOT_WRAPPABLE): %w", t.label, ko.alg, signer.ErrUnsupported)
		}
		return wrap("C_WrapKey", err)
	})
	if err != nil {
		return nil, err
	}
	return w.encode(), nil
}

// ImportWrapped unwraps an ExportWrapped export under the wrap key
// wrapRef names, as a sensitive key that may be exported again, with its
// label, id and public key object, and checks that it signs for that
// public key. A label in use fails with an error wrapping
// signer.ErrKeyExists; an export that does not unwrap (another wrap key,
// damage) with one wrapping signer.ErrInvalidKey.
func (t *Store) ImportWrapped(ctx context.Context, data []byte, wrapRef signer.KeyRef) (signer.KeyInfo, error) {
	if err := t.checkOpen(); err != nil {
		return signer.KeyInfo{}, err
	}
	w, err := decodeWrapped(data)
	if err != nil {
		return signer.KeyInfo{}, err
	}
	pubT, privT, err := t.templates(w.alg, w.label, w.id, true)
	if err != nil {
		return signer.KeyInfo{}, err
	}
	pubT = append(pubT, p11.NewAttribute(p11.CKA_EC_POINT, w.point))
	info, err := t.store(ctx, w.label, func(sh p11.SessionHandle) (p11.ObjectHandle, error) {
		wh, err := t.wrapKey(sh, wrapRef, p11.CKA_UNWRAP)
		if err != nil {
			return 0, err
		}
		h, err := t.pool.mod.ctx.UnwrapKey(sh, []*p11.Mechanism{p11.NewMechanism(WrapMechanism, nil)}, wh, w.wrapped, privT)
		if code, ok := ckr(err); ok && (code == p11.CKR_WRAPPED_KEY_INVALID || code == p11.CKR_ENCRYPTED_DATA_INVALID ||
			code == p11.CKR_WRAPPED_KEY_LEN_RANGE || code == p11.CKR_ENCRYPTED_DATA_LEN_RANGE || code == p11.CKR_GENERAL_ERROR) {
			// SoftHSM2 answers CKR_GENERAL_ERROR when RFC 5649's integrity
			// check fails.
			return 0, fmt.Errorf("pkcs11: the export does not unwrap under this wrap key (another wrap key, or damaged; %s): %w", p11.Error(code), signer.ErrInvalidKey)
		}
		if err != nil {
			return 0, wrap("C_UnwrapKey", err)
		}
		if _, err := t.pool.mod.ctx.CreateObject(sh, pubT); err != nil {
			t.pool.mod.ctx.DestroyObject(sh, h)
			return 0, wrap("C_CreateObject", err)
		}
		return h, nil
	}, w.alg)
	if err != nil {
		return signer.KeyInfo{}, err
	}
	if err := t.checkSigns(ctx, info); err != nil {
		t.DeleteKey(ctx, info.Ref())
		return signer.KeyInfo{}, err
	}
	return info, nil
}

// checkSigns signs a fixed message with the key info names and verifies
// it against info.Public: an unwrapped private key that does not belong to
// the public key the export carried is refused.
func (t *Store) checkSigns(ctx context.Context, info signer.KeyInfo) error {
	s, err := t.OpenKey(ctx, info.Ref())
	if err != nil {
		return err
	}
	defer s.Close()
	msg := []byte("signerkit: check of a key imported under wrap")
	sig, err := s.SignContext(ctx, msg)
	if err != nil {
		return err
	}
	if err := info.Algorithm.Verify(info.Public, msg, sig); err != nil {
		return fmt.Errorf("pkcs11: the unwrapped key does not sign for the public key the export names: %w: %w", signer.ErrInvalidKey, err)
	}
	return nil
}
