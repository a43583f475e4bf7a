// Package fileopen opens a file that must be a regular file without
// blocking on one that is not: a named pipe (FIFO) put where a key file or
// a secret file should be would block an open for reading until a writer
// came, and a device could be read forever. It is the open shared by
// signer.SecretFile, package keybase's key and lock files and package
// inprocess's key files; each caller keeps its own policy (size limit,
// permission checks, error types) on top of it.
//
// On Unix the open adds O_NONBLOCK (and, when links are not followed,
// O_NOFOLLOW) and the file is then checked with fstat, so what is checked
// is what was opened. Elsewhere (Windows) there are no such flags: a
// symbolic link is looked for with Lstat before the open, and a link made
// between the check and the open is followed.
package fileopen

import (
	"errors"
	"io"
	"io/fs"
	"os"
)

// Links says what Open does with a symbolic link as the last element of
// the path.
type Links uint8

const (
	// Follow opens what the link points to (secret volumes link their
	// files).
	Follow Links = iota
	// NoFollow refuses the link with ErrSymlink.
	NoFollow
)

// ErrSymlink is the error of Open with NoFollow when the path is a
// symbolic link. Callers turn it into an error of their own.
var ErrSymlink = errors.New("fileopen: a symbolic link")

// NotRegularError is the error of Open when the file opened is not a
// regular file. Callers turn it into an error of their own.
type NotRegularError struct {
	// Mode is the file's mode, whose type bits say what it is.
	Mode fs.FileMode
}

func (e *NotRegularError) Error() string {
	return "fileopen: not a regular file (" + TypeName(e.Mode) + ")"
}

// Open opens path as os.OpenFile(path, flag, perm) does, without blocking
// on a FIFO or a device and, with NoFollow, without following a symbolic
// link, and checks that what it opened is a regular file. It returns the
// file and its FileInfo, or an error: ErrSymlink, a *NotRegularError, or
// the os error (wrapping fs.ErrNotExist for a missing file).
func Open(path string, flag int, perm fs.FileMode, links Links) (*os.File, fs.FileInfo, error) {
	if links == NoFollow && !openNoFollow {
		// No O_NOFOLLOW here: check first (a link made between the check
		// and the open is followed).
		if fi, err := os.Lstat(path); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
			return nil, nil, ErrSymlink
		}
	}
	f, err := os.OpenFile(path, flag|openFlags(links), perm)
	if err != nil {
		if links == NoFollow && !errors.Is(err, fs.ErrNotExist) {
			// O_NOFOLLOW fails on a link with ELOOP (Linux, macOS),
			// EMLINK (FreeBSD) or EFTYPE (NetBSD): say which it was.
			if fi, lerr := os.Lstat(path); lerr == nil && fi.Mode()&fs.ModeSymlink != 0 {
				return nil, nil, ErrSymlink
			}
		}
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, nil, &NotRegularError{Mode: fi.Mode()}
	}
	return f, fi, nil
}

// TypeName names the type of a file: "a regular file", "a named pipe
// (FIFO)", "a socket", "a directory", …
func TypeName(m fs.FileMode) string {
	switch {
	case m.IsRegular():
		return "a regular file"
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

// ReadFile reads the regular file at path (following a symbolic link) up
// to limit+1 bytes, so that a result longer than limit tells the caller
// the file is larger than any it takes. Its errors name path: a
// *fs.PathError wrapping fs.ErrNotExist for a missing file, or wrapping a
// *NotRegularError, at once, for a FIFO or a device. What a failed read
// got is wiped; what ReadFile returns is the caller's to wipe.
func ReadFile(path string, limit int64) ([]byte, error) {
	f, _, err := Open(path, os.O_RDONLY, 0, Follow)
	if nr, ok := err.(*NotRegularError); ok {
		err = &fs.PathError{Op: "open", Path: path, Err: nr}
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		clear(data)
		return nil, err
	}
	return data, nil
}
