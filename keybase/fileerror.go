package keybase

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/signerkit/signerkit/internal/fileopen"
	"github.com/signerkit/signerkit/signer"
)

// FileProblem says what FileError finds wrong with a path of a Store.
type FileProblem uint8

// The problems a Store finds with its directory and files.
const (
	// FileSymlink: the key directory (the last element of its path), a
	// key file or the lock file is a symbolic link. The store follows
	// none: a link could point its reads and writes anywhere.
	FileSymlink FileProblem = iota + 1
	// FileNotRegular: a key file or the lock file is not a regular file
	// but, say, a named pipe (FIFO), a device, a socket or a directory.
	// The store opens files without blocking and checks their type before
	// reading, so a FIFO named "x.key" cannot hang it.
	FileNotRegular
	// FileNotDirectory: the key directory's path is not a directory.
	FileNotDirectory
	// FileForeignOwner: the key directory is owned by another user than
	// the process's effective user (checked on Unix only).
	FileForeignOwner
	// FileOpenToOthers: the key directory's mode lets other users read,
	// write or enter it (not checked on Windows).
	FileOpenToOthers
)

var fileProblemText = map[FileProblem]string{
	FileSymlink:      "a symbolic link, which the store does not follow",
	FileNotRegular:   "not a regular file",
	FileNotDirectory: "not a directory",
	FileForeignOwner: "owned by another user",
	FileOpenToOthers: "open to other users",
}

func (p FileProblem) String() string {
	if s, ok := fileProblemText[p]; ok {
		return s
	}
	return fmt.Sprintf("FileProblem(%d)", uint8(p))
}

// FileError reports a key directory or a file in it that a Store refuses
// to use. It unwraps to signer.ErrInvalidArgument for FileNotDirectory, to
// signer.ErrCorrupt for FileNotRegular (a key file that cannot be a key,
// as a garbled one is) and to signer.ErrPermissionDenied otherwise.
type FileError struct {
	// Path is the directory's or the file's path.
	Path    string
	Problem FileProblem
	// Detail says more: the file's type, the directory's owner or mode,
	// the remedy.
	Detail string
}

func (e *FileError) Error() string {
	msg := "keybase: " + e.Path + ": " + e.Problem.String()
	if e.Detail != "" {
		msg += ": " + e.Detail
	}
	return msg
}

// Unwrap returns the sentinel the problem belongs to.
func (e *FileError) Unwrap() error {
	switch e.Problem {
	case FileNotDirectory:
		return signer.ErrInvalidArgument
	case FileNotRegular:
		return signer.ErrCorrupt
	}
	return signer.ErrPermissionDenied
}

// openFile opens path, a key file or the lock file, without following a
// symbolic link and without blocking (a FIFO would block an open for
// reading until a writer came), and checks that it is a regular file;
// anything else is refused with a *FileError. A missing file is an error
// wrapping fs.ErrNotExist.
func openFile(path string, flag int, perm fs.FileMode) (*os.File, error) {
	f, _, err := fileopen.Open(path, flag, perm, fileopen.NoFollow)
	var nr *fileopen.NotRegularError
	switch {
	case errors.Is(err, fileopen.ErrSymlink):
		return nil, &FileError{Path: path, Problem: FileSymlink}
	case errors.As(err, &nr):
		return nil, &FileError{Path: path, Problem: FileNotRegular, Detail: fileopen.TypeName(nr.Mode)}
	}
	return f, err
}
