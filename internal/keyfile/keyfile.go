// Package keyfile reads a key file whole for the packages that load keys
// from files (bls and inprocess): without blocking on a FIFO or a device,
// bounded in size, and with errors that wrap signer's sentinels. Each
// caller keeps its own parsing, size check and error wrapping on top of
// it.
package keyfile

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/signerkit/signerkit/internal/fileopen"
	"github.com/signerkit/signerkit/signer"
)

// Read reads the file at path, following a symbolic link, up to limit+1
// bytes: a result longer than limit says the file is larger than any key
// file, for the caller to refuse. A missing file gives an error wrapping
// signer.ErrKeyNotFound, and a path that is not a regular file (a
// directory, a pipe) one wrapping signer.ErrInvalidArgument; neither
// error names the path, which the caller adds. What a failed read got is
// wiped; what Read returns is the caller's to wipe.
func Read(path string, limit int64) ([]byte, error) {
	// A FIFO or device put where the key file should be is refused as not
	// a regular file instead of blocking the open.
	data, err := fileopen.ReadFile(path, limit)
	if err != nil {
		var nr *fileopen.NotRegularError
		switch {
		case errors.As(err, &nr):
			return nil, fmt.Errorf("not a regular file: %w", signer.ErrInvalidArgument)
		case errors.Is(err, fs.ErrNotExist):
			return nil, fmt.Errorf("no such file: %w", signer.ErrKeyNotFound)
		}
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err // the caller names the path
		}
		return nil, err
	}
	return data, nil
}
