package threshold

import (
	"bytes"
	"encoding/pem"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/signerkit/signerkit/internal/atomicfile"
	"github.com/signerkit/signerkit/internal/keyfile"
	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/threshold/frost"
)

// PEM block types of the share and public key files.
const (
	pemShare  = "SIGNERKIT FROST SHARE"
	pemPublic = "SIGNERKIT FROST PUBLIC KEY"
)

// maxShareFile bounds a share or public key file: 255 participants' public
// shares take under 20 KB of PEM.
const maxShareFile = 64 << 10

// ShareFileError is a share or public key file that cannot be used. It
// names the file (when read from one) and wraps signer.ErrCorrupt for a
// file that is not what it should be, signer.ErrInvalidKey for key
// material that is inconsistent, or the error reading it.
type ShareFileError struct {
	Path string
	Err  error
}

func (e *ShareFileError) Error() string {
	if e.Path == "" {
		return "threshold: share file: " + e.Err.Error()
	}
	return "threshold: " + e.Path + ": " + e.Err.Error()
}

func (e *ShareFileError) Unwrap() error { return e.Err }

func corruptShare(format string, args ...any) error {
	return fmt.Errorf("%s: %w", fmt.Sprintf(format, args...), signer.ErrCorrupt)
}

// MarshalShare returns the share file of one participant: its key package
// and the key's public key package, as two PEM blocks. The result is as
// secret as the share: write it with mode 0600 and wipe it.
func MarshalShare(k *frost.KeyPackage, pub *frost.PublicKeyPackage) ([]byte, error) {
	if err := checkSharePublic(k, pub); err != nil {
		return nil, err
	}
	kb, err := k.MarshalBinary()
	if err != nil {
		return nil, err
	}
	defer clear(kb)
	out := pem.EncodeToMemory(&pem.Block{Type: pemShare, Headers: map[string]string{"Participant": fmt.Sprint(k.ID())}, Bytes: kb})
	return append(out, MarshalPublic(pub)...), nil
}

// MarshalPublic returns the public key file of a key: its public key
// package in one PEM block. It holds no secret.
func MarshalPublic(pub *frost.PublicKeyPackage) []byte {
	pb, _ := pub.MarshalBinary()
	return pem.EncodeToMemory(&pem.Block{Type: pemPublic, Headers: map[string]string{
		"Threshold": fmt.Sprintf("%d-of-%d", pub.MinSigners(), len(pub.IDs())),
		"Group-Key": fmt.Sprintf("%x", []byte(pub.GroupPublicKey()))}, Bytes: pb})
}

// checkSharePublic checks that k is one of pub's participants.
func checkSharePublic(k *frost.KeyPackage, pub *frost.PublicKeyPackage) error {
	switch {
	case k == nil || pub == nil:
		return fmt.Errorf("threshold: a share needs its key package and public key package: %w", signer.ErrInvalidArgument)
	case !bytes.Equal(k.GroupPublicKey(), pub.GroupPublicKey()) || k.MinSigners() != pub.MinSigners():
		return fmt.Errorf("threshold: share %d is of another key than the public key package: %w", k.ID(), signer.ErrInvalidKey)
	case !bytes.Equal(k.VerifyingShare(), pub.VerifyingShare(k.ID())):
		return fmt.Errorf("threshold: share %d does not match its public key share: %w", k.ID(), signer.ErrInvalidKey)
	}
	return nil
}

// pemBlocks decodes data as PEM blocks and nothing else.
func pemBlocks(data []byte) ([]*pem.Block, error) {
	var blocks []*pem.Block
	rest := data
	for {
		var b *pem.Block
		b, rest = pem.Decode(rest)
		if b == nil {
			break
		}
		blocks = append(blocks, b)
	}
	if len(bytes.TrimSpace(rest)) > 0 {
		return nil, corruptShare("text outside PEM blocks")
	}
	return blocks, nil
}

func onlyBlock(blocks []*pem.Block, typ string) (*pem.Block, error) {
	var found *pem.Block
	for _, b := range blocks {
		switch {
		case b.Type != pemShare && b.Type != pemPublic:
			return nil, corruptShare("a %.40q PEM block: not a signerkit threshold file", b.Type)
		case b.Type == typ && found != nil:
			return nil, corruptShare("two %s blocks", typ)
		case b.Type == typ:
			found = b
		}
	}
	if found == nil {
		return nil, corruptShare("no %s block", typ)
	}
	return found, nil
}

// ParsePublic reads a public key file (or the public part of a share
// file). Errors are *ShareFileError values.
func ParsePublic(data []byte) (*frost.PublicKeyPackage, error) {
	pub, err := parsePublic(data)
	if err != nil {
		return nil, &ShareFileError{Err: err}
	}
	return pub, nil
}

func parsePublic(data []byte) (*frost.PublicKeyPackage, error) {
	if len(data) > maxShareFile {
		return nil, corruptShare("more than %d bytes", maxShareFile)
	}
	blocks, err := pemBlocks(data)
	if err != nil {
		return nil, err
	}
	b, err := onlyBlock(blocks, pemPublic)
	if err != nil {
		return nil, err
	}
	pub, err := frost.ParsePublicKeyPackage(b.Bytes)
	if err != nil {
		return nil, corruptShare("%v", err)
	}
	return pub, nil
}

// ParseShare reads a share file: the participant's key package, checked
// against the public key package beside it. Errors are *ShareFileError
// values and never quote key material. The caller wipes the key package.
func ParseShare(data []byte) (*frost.KeyPackage, *frost.PublicKeyPackage, error) {
	k, pub, err := parseShareFile(data)
	if err != nil {
		return nil, nil, &ShareFileError{Err: err}
	}
	return k, pub, nil
}

func parseShareFile(data []byte) (*frost.KeyPackage, *frost.PublicKeyPackage, error) {
	pub, err := parsePublic(data)
	if err != nil {
		return nil, nil, err
	}
	blocks, _ := pemBlocks(data)
	b, err := onlyBlock(blocks, pemShare)
	if err != nil {
		return nil, nil, err
	}
	defer func() {
		for _, b := range blocks {
			clear(b.Bytes)
		}
	}()
	k, err := frost.ParseKeyPackage(b.Bytes)
	if err != nil {
		var ee *frost.EncodingError
		if errors.As(err, &ee) {
			return nil, nil, corruptShare("%v", err)
		}
		return nil, nil, err
	}
	if err := checkSharePublic(k, pub); err != nil {
		k.Wipe()
		return nil, nil, err
	}
	return k, pub, nil
}

// LoadShare reads and parses the share file at path (see ParseShare).
func LoadShare(path string) (*frost.KeyPackage, *frost.PublicKeyPackage, error) {
	data, err := keyfile.Read(path, maxShareFile)
	if err != nil {
		return nil, nil, &ShareFileError{Path: path, Err: err}
	}
	defer clear(data)
	k, pub, err := parseShareFile(data)
	if err != nil {
		return nil, nil, &ShareFileError{Path: path, Err: err}
	}
	return k, pub, nil
}

// LoadPublic reads the public key package at path: a public key file or a
// share file.
func LoadPublic(path string) (*frost.PublicKeyPackage, error) {
	data, err := keyfile.Read(path, maxShareFile)
	if err != nil {
		return nil, &ShareFileError{Path: path, Err: err}
	}
	defer clear(data)
	pub, err := parsePublic(data)
	if err != nil {
		return nil, &ShareFileError{Path: path, Err: err}
	}
	return pub, nil
}

// WriteShareFiles writes a dealt or generated key to dir: public.pem, and
// share-<id>.pem for each key package, mode 0600, refusing to overwrite
// any. It returns the paths written, public.pem first.
func WriteShareFiles(dir string, keys []*frost.KeyPackage, pub *frost.PublicKeyPackage) ([]string, error) {
	paths := []string{filepath.Join(dir, "public.pem")}
	files := [][]byte{MarshalPublic(pub)}
	for _, k := range keys {
		b, err := MarshalShare(k, pub)
		if err != nil {
			return nil, err
		}
		defer clear(b)
		paths = append(paths, filepath.Join(dir, fmt.Sprintf("share-%d.pem", k.ID())))
		files = append(files, b)
	}
	for i, p := range paths {
		if err := atomicfile.CreateFile(p, files[i], atomicfile.Options{}); err != nil {
			return paths[:i], fmt.Errorf("threshold: %w", err)
		}
	}
	return paths, nil
}
