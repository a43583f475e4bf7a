package signer

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"strings"

	"github.com/signerkit/signerkit/internal/fileopen"
)

// Secret hands a backend a passphrase, password or PIN when it needs one:
// a keybase passphrase, a YubiHSM authentication key's password, a PKCS#11
// user PIN. It is called when the secret is needed (at open, or on every
// sign for a key decrypted per sign) and returns a fresh slice that the
// caller owns: the backend wipes it once used. A Secret must be safe for
// concurrent use.
//
// Secrets come from SecretBytes, SecretEnv, SecretFile, SecretSource, or a
// function of the caller's own (a terminal prompt, a secrets manager).
type Secret func() ([]byte, error)

// SecretBytes returns a Secret that hands out copies of b. It keeps b
// itself, not a copy, so the caller wipes the secret by wiping b once
// nothing will call the Secret again (for a key decrypted on every sign,
// once its Signers are closed).
func SecretBytes(b []byte) Secret {
	return func() ([]byte, error) { return bytes.Clone(b), nil }
}

// SecretEnv returns a Secret read from the environment variable name at
// each call. An unset variable is an error wrapping ErrInvalidArgument;
// a variable set to the empty string is an empty secret.
func SecretEnv(name string) Secret {
	return func() ([]byte, error) {
		v, ok := os.LookupEnv(name)
		if !ok {
			return nil, fmt.Errorf("signer: secret: environment variable %s is not set: %w", name, ErrInvalidArgument)
		}
		return []byte(v), nil
	}
}

// MaxSecretFileSize is the largest file SecretFile reads: a PIN or
// passphrase is a line, not a document, and a larger file (a log, a key
// file named by mistake, /dev/zero) is refused unread.
const MaxSecretFileSize = 4096

// SecretFile returns a Secret read at each call from the file at path: its
// first line, without the line ending. Symbolic links are followed (secret
// volumes link their files), and what is checked is the file opened:
//
//   - it must be a regular file of at most MaxSecretFileSize bytes, else
//     the error wraps ErrInvalidArgument;
//   - on Unix, like ssh's private keys, it must give no permission to its
//     group or to others (mode 0600 or 0400 will do) and be owned by the
//     effective user or by root, else the error wraps ErrPermissionDenied
//     and says what to change. (A Kubernetes secret volume's default mode,
//     0644, is refused: mount it with defaultMode 0400, or pass the secret
//     through the environment.) Windows has no such check.
//
// A file that cannot be read is an error that wraps the os error and names
// the path, never the content.
func SecretFile(path string) Secret {
	return func() ([]byte, error) {
		// Without blocking on a FIFO or a device, which is refused.
		f, fi, err := fileopen.Open(path, os.O_RDONLY, 0, fileopen.Follow)
		if nr := (*fileopen.NotRegularError)(nil); errors.As(err, &nr) {
			return nil, fmt.Errorf("signer: secret file %s is not a regular file (%v): %w", path, nr.Mode.Type(), ErrInvalidArgument)
		}
		if err != nil {
			return nil, fmt.Errorf("signer: secret: %w", err)
		}
		defer f.Close()
		if fi.Size() > MaxSecretFileSize {
			return nil, fmt.Errorf("signer: secret file %s has %d bytes, more than the %d a secret may have: %w", path, fi.Size(), MaxSecretFileSize, ErrInvalidArgument)
		}
		if err := checkSecretFileOwner(path, fi); err != nil {
			return nil, err
		}
		b := make([]byte, MaxSecretFileSize+1)
		defer clear(b)
		n, err := io.ReadFull(f, b)
		if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
			return nil, fmt.Errorf("signer: secret: reading %s: %w", path, err)
		}
		if n > MaxSecretFileSize { // it grew since the fstat
			return nil, fmt.Errorf("signer: secret file %s has more than the %d bytes a secret may have: %w", path, MaxSecretFileSize, ErrInvalidArgument)
		}
		line := b[:n]
		if i := bytes.IndexAny(line, "\r\n"); i >= 0 {
			line = line[:i]
		}
		s := make([]byte, len(line))
		copy(s, line)
		return s, nil
	}
}

// SecretSource returns the Secret that a URI's pin-source attribute names:
//
//	env:NAME           the environment variable NAME (SecretEnv)
//	file:/run/pin      the file's first line (SecretFile); file:///run/pin too
//	/run/pin           the same, as RFC 7512 writes it
//
// Anything else is an error wrapping ErrInvalidArgument, or ErrUnsupported
// for a URI scheme other than env: and file:.
func SecretSource(src string) (Secret, error) {
	if name, ok := cutPrefixFold(src, "env:"); ok {
		if name == "" || strings.ContainsAny(name, "=\x00") {
			return nil, fmt.Errorf("signer: secret source env: names no variable: %w", ErrInvalidArgument)
		}
		return SecretEnv(name), nil
	}
	if rest, ok := cutPrefixFold(src, "file:"); ok {
		p, err := url.Parse("file:" + rest)
		if err != nil || (p.Host != "" && p.Host != "localhost") || p.Path == "" {
			return nil, fmt.Errorf("signer: secret source is not a local file: URI: %w", ErrInvalidArgument)
		}
		return SecretFile(p.Path), nil
	}
	if src == "" {
		return nil, fmt.Errorf("signer: secret source is empty: %w", ErrInvalidArgument)
	}
	if i := strings.IndexByte(src, ':'); i > 0 && !strings.ContainsAny(src[:i], `/\`) {
		// The source is query text of a URI: not quoted.
		return nil, fmt.Errorf("signer: secret source: only env:, file: and paths are supported: %w", ErrUnsupported)
	}
	return SecretFile(src), nil
}

func cutPrefixFold(s, prefix string) (string, bool) {
	if len(s) < len(prefix) || !strings.EqualFold(s[:len(prefix)], prefix) {
		return s, false
	}
	return s[len(prefix):], true
}

// truncate keeps untrusted input short in error messages.
func truncate(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}
