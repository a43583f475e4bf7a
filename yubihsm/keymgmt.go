package yubihsm

import (
	"context"
	"errors"
	"fmt"

	"github.com/certusone/yubihsm-go/commands"

	"github.com/signerkit/signerkit/internal/scp03"
	"github.com/signerkit/signerkit/signer"
)

// Key management beyond signing: keys exportable under wrap, wrapped
// export and import, wrap keys and authentication keys, device options.
// The setup of a new device (cmd/signerkit's yubihsm setup) is built on
// these.

var (
	_ signer.ExportableKeyGenerator = (*Store)(nil)
	_ signer.KeyWrapper             = (*Store)(nil)
)

// Object types and capabilities of key management, as the device numbers
// them (Yubico's command reference; yubihsm-go's commands package).
const (
	TypeAuthKey = commands.ObjectTypeAuthenticationKey
	TypeWrapKey = commands.ObjectTypeWrapKey

	CapExportWrapped       = commands.CapabilityExportWrapped
	CapImportWrapped       = commands.CapabilityImportWrapped
	CapExportableUnderWrap = commands.CapabilityExportableUnderWrap
	CapSignEdDSA           = commands.CapabilityAsymmetricSignEddsa
	CapSignECDSA           = commands.CapabilityAsymmetricSignEcdsa
	// CapAll is every capability of firmware 2.x (bits 0 to 46).
	CapAll uint64 = 1<<47 - 1
)

// WrapNonceSize is the size of the nonce an export starts with.
const WrapNonceSize = 13

// GenerateExportableKey is GenerateKey for a key that also has the
// exportable-under-wrap capability: ExportWrapped can back it up under a
// wrap key whose delegated capabilities cover its own.
func (s *Store) GenerateExportableKey(ctx context.Context, alg signer.Algorithm, label string) (signer.KeyInfo, error) {
	return s.generate(ctx, alg, label, CapExportableUnderWrap)
}

// wrapKeyID finds the wrap key ref names: by id, or by its label.
func (s *Store) wrapKeyID(ctx context.Context, ref signer.KeyRef) (uint16, error) {
	if ref.ID != "" {
		return ParseID(ref.ID)
	}
	if err := checkLabel(ref.Label); err != nil {
		return 0, err
	}
	lo, err := commands.NewLabelOption([]byte(ref.Label))
	if err != nil {
		return 0, fmt.Errorf("yubihsm: wrap key label %q: %v: %w", ref.Label, err, signer.ErrInvalidArgument)
	}
	resp, err := s.pool.do(ctx, func() (*commands.CommandMessage, error) {
		return commands.CreateListObjectsCommand(commands.NewObjectTypeOption(TypeWrapKey), lo)
	})
	if err != nil {
		return 0, wrap(err, "list wrap keys")
	}
	list, ok := resp.(*commands.ListObjectsResponse)
	if !ok {
		return 0, &protocolError{fmt.Sprintf("list objects: response %T", resp)}
	}
	switch len(list.Objects) {
	case 0:
		return 0, fmt.Errorf("yubihsm: no wrap key labelled %q: %w", ref.Label, signer.ErrKeyNotFound)
	case 1:
		return list.Objects[0].ObjectID, nil
	}
	return 0, fmt.Errorf("yubihsm: %d wrap keys are labelled %q; name it by id: %w", len(list.Objects), ref.Label, signer.ErrInvalidArgument)
}

// ExportWrapped exports the asymmetric key key names, encrypted by the
// device under the wrap key wrapRef names (Export Wrapped): the nonce then
// the sealed object, as the device gives them. The key needs the
// exportable-under-wrap capability (GenerateExportableKey), the wrap key
// and the session's authentication key export-wrapped; a refusal wraps
// signer.ErrPermissionDenied.
func (s *Store) ExportWrapped(ctx context.Context, key, wrapRef signer.KeyRef) ([]byte, error) {
	o, err := s.resolve(ctx, key)
	if err != nil {
		return nil, err
	}
	wid, err := s.wrapKeyID(ctx, wrapRef)
	if err != nil {
		return nil, err
	}
	resp, err := s.pool.do(ctx, func() (*commands.CommandMessage, error) {
		return commands.CreateExportWrappedCommand(wid, commands.ObjectTypeAsymmetricKey, o.id)
	})
	if err != nil {
		if errors.Is(err, signer.ErrPermissionDenied) {
			return nil, fmt.Errorf("yubihsm: key %04x may not leave the device under wrap key %04x: that needs the key made exportable (GenerateExportableKey; signerkit keys generate -exportable), its capabilities within the wrap key's delegated ones, and export-wrapped on the wrap key and the authentication key: %w", o.id, wid, err)
		}
		return nil, wrap(err, "export %04x under wrap key %04x", o.id, wid)
	}
	r, ok := resp.(*commands.ExportWrappedResponse)
	if !ok || len(r.Nonce) != WrapNonceSize || len(r.Data) == 0 {
		return nil, &protocolError{fmt.Sprintf("export wrapped: response %T", resp)}
	}
	return append(append([]byte(nil), r.Nonce...), r.Data...), nil
}

// ImportWrapped imports an ExportWrapped export under the wrap key wrapRef
// names (Import Wrapped). The key comes back with the id, label,
// domains and capabilities it was exported with; an id in use fails with
// an error wrapping signer.ErrKeyExists, and data that does not open under
// the wrap key with one wrapping signer.ErrInvalidKey.
func (s *Store) ImportWrapped(ctx context.Context, wrapped []byte, wrapRef signer.KeyRef) (signer.KeyInfo, error) {
	if len(wrapped) <= WrapNonceSize {
		return signer.KeyInfo{}, fmt.Errorf("yubihsm: a wrapped key of %d bytes: %w", len(wrapped), signer.ErrInvalidKey)
	}
	wid, err := s.wrapKeyID(ctx, wrapRef)
	if err != nil {
		return signer.KeyInfo{}, err
	}
	resp, err := s.pool.do(ctx, func() (*commands.CommandMessage, error) {
		return commands.CreateImportWrappedCommand(wid, wrapped[:WrapNonceSize], wrapped[WrapNonceSize:])
	})
	var de *DeviceError
	if errors.As(err, &de) && de.Code == CodeInvalidData {
		return signer.KeyInfo{}, fmt.Errorf("yubihsm: the wrapped key does not open under wrap key %04x (another wrap key, or damaged): %w: %w", wid, signer.ErrInvalidKey, err)
	}
	if err != nil {
		return signer.KeyInfo{}, wrap(err, "import under wrap key %04x", wid)
	}
	r, ok := resp.(*commands.ImportWrappedResponse)
	if !ok {
		return signer.KeyInfo{}, &protocolError{fmt.Sprintf("import wrapped: response %T", resp)}
	}
	if r.ObjectType != commands.ObjectTypeAsymmetricKey {
		return signer.KeyInfo{}, fmt.Errorf("yubihsm: the wrapped object was of type %d, not a key (imported as %04x): %w", r.ObjectType, r.ObjectID, signer.ErrInvalidKey)
	}
	o, err := s.describe(ctx, r.ObjectID)
	if err != nil {
		return signer.KeyInfo{}, err
	}
	return o.info(), nil
}

// AuthKey describes a password authentication key for PutAuthKey.
type AuthKey struct {
	ID        uint16 // 0: the device picks one
	Label     string
	Domains   uint16
	Caps      uint64 // what sessions opened with it may do
	Delegated uint64 // what objects it makes may do
}

// PutAuthKey stores a password authentication key (its two AES keys
// derived from password as every YubiHSM client derives them) and returns
// its id.
func (s *Store) PutAuthKey(ctx context.Context, k AuthKey, password []byte) (uint16, error) {
	if err := checkLabel(k.Label); err != nil {
		return 0, err
	}
	// Derived once here, not on each of pool.do's attempts, and never
	// copied into a string that cannot be wiped.
	enc, mac := scp03.AuthKey(password)
	defer clear(enc[:])
	defer clear(mac[:])
	resp, err := s.pool.do(ctx, func() (*commands.CommandMessage, error) {
		return commands.CreatePutAuthkeyCommand(k.ID, []byte(k.Label), k.Domains, k.Caps, k.Delegated, enc[:], mac[:])
	})
	if err != nil {
		return 0, wrap(err, "put authentication key %04x", k.ID)
	}
	r, ok := resp.(*commands.PutAuthkeyResponse)
	if !ok {
		return 0, &protocolError{fmt.Sprintf("put authentication key: response %T", resp)}
	}
	return r.ObjectID, nil
}

// WrapKey describes an AES-CCM wrap key for PutWrapKey.
type WrapKey struct {
	ID        uint16 // 0: the device picks one
	Label     string
	Domains   uint16
	Caps      uint64 // export-wrapped, import-wrapped
	Delegated uint64 // the capabilities keys exported or imported under it may have
}

// PutWrapKey stores key (16, 24 or 32 bytes: AES-128, -192 or -256 CCM)
// as a wrap key and returns its id.
func (s *Store) PutWrapKey(ctx context.Context, w WrapKey, key []byte) (uint16, error) {
	if err := checkLabel(w.Label); err != nil {
		return 0, err
	}
	var alg commands.Algorithm
	switch len(key) {
	case 16:
		alg = commands.AlgorithmAES128CCMWrap
	case 24:
		alg = commands.AlgorithmAES192CCMWrap
	case 32:
		alg = commands.AlgorithmAES256CCMWrap
	default:
		return 0, fmt.Errorf("yubihsm: a wrap key of %d bytes: want 16, 24 or 32: %w", len(key), signer.ErrInvalidArgument)
	}
	resp, err := s.pool.do(ctx, func() (*commands.CommandMessage, error) {
		return commands.CreatePutWrapkeyCommand(w.ID, []byte(w.Label), w.Domains, w.Caps, alg, w.Delegated, key)
	})
	if err != nil {
		return 0, wrap(err, "put wrap key %04x", w.ID)
	}
	r, ok := resp.(*commands.PutWrapkeyResponse)
	if !ok {
		return 0, &protocolError{fmt.Sprintf("put wrap key: response %T", resp)}
	}
	return r.ObjectID, nil
}

// DeleteObject deletes the object of type typ (TypeAuthKey, TypeWrapKey,
// …) with id id.
func (s *Store) DeleteObject(ctx context.Context, typ uint8, id uint16) error {
	_, err := s.pool.do(ctx, func() (*commands.CommandMessage, error) {
		return commands.CreateDeleteObjectCommand(id, typ)
	})
	if err != nil {
		return wrap(err, "delete object %04x of type %d", id, typ)
	}
	return nil
}

// HasObject reports whether the session's authentication key sees an
// object of type typ with id id.
func (s *Store) HasObject(ctx context.Context, typ uint8, id uint16) (bool, error) {
	_, err := s.pool.do(ctx, func() (*commands.CommandMessage, error) {
		return commands.CreateGetObjectInfoCommand(id, typ)
	})
	if errors.Is(err, signer.ErrKeyNotFound) {
		return false, nil
	}
	if err != nil {
		return false, wrap(err, "object %04x of type %d", id, typ)
	}
	return true, nil
}

// Device options (Set Option).
const (
	OptionForceAudit   = 0x01
	OptionCommandAudit = 0x03
)

// SetOption sets a device option (Set Option, which needs the set-option
// capability): OptionForceAudit with one byte (0 off, 1 on), or
// OptionCommandAudit with pairs of command and setting.
func (s *Store) SetOption(ctx context.Context, option byte, value []byte) error {
	if len(value) == 0 || len(value) > 0x400 {
		return fmt.Errorf("yubihsm: option value of %d bytes: %w", len(value), signer.ErrInvalidArgument)
	}
	data := append([]byte{option, byte(len(value) >> 8), byte(len(value))}, value...)
	_, err := s.pool.do(ctx, func() (*commands.CommandMessage, error) {
		return &commands.CommandMessage{CommandType: commands.CommandTypePutOption, Data: data}, nil
	})
	// yubihsm-go parses no Set Option answer: the session reads it
	// (rawresp.go), and an answer to another command is an error.
	if err != nil {
		return wrap(err, "set option %d", option)
	}
	return nil
}
