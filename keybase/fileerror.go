package keybase

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

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

// fileType names the type of a file that is not regular.
func fileType(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m.IsDir():
		return "a directory"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	}
	return "of mode " + m.String()
}

// openFile opens path, a key file or the lock file, without following a
// symbolic link and without blocking (a FIFO would block an open for
// reading until a writer came), and checks that it is a regular file;
// anything else is refused with a *FileError. A missing file is an error
// wrapping fs.ErrNotExist.
func openFile(path string, flag int, perm fs.FileMode) (*os.File, error) {
	if !noFollow {
		// No O_NOFOLLOW here: check first (a link made between the check
		// and the open is followed).
		if fi, err := os.Lstat(path); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
			return nil, &FileError{Path: path, Problem: FileSymlink}
		}
	}
	f, err := os.OpenFile(path, flag|openFlags, perm)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			// O_NOFOLLOW fails on a link with ELOOP (Linux, macOS),
			// EMLINK (FreeBSD) or EFTYPE (NetBSD): say which it was.
			if fi, lerr := os.Lstat(path); lerr == nil && fi.Mode()&fs.ModeSymlink != 0 {
				return nil, &FileError{Path: path, Problem: FileSymlink}
			}
		}
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, &FileError{Path: path, Problem: FileNotRegular, Detail: fileType(fi.Mode())}
	}
	return f, nil
}
