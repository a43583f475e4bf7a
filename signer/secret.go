package signer

import (
	"bytes"
	"fmt"
	"net/url"
	"os"
	"strings"
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

// SecretFile returns a Secret read at each call from the file at path: its
// first line, without the line ending. A file that cannot be read is an
// error that wraps the os error and names the path, never the content.
func SecretFile(path string) Secret {
	return func() ([]byte, error) {
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("signer: secret: %w", err)
		}
		line := b
		if i := bytes.IndexAny(b, "\r\n"); i >= 0 {
			line = b[:i]
		}
		s := bytes.Clone(line)
		if s == nil {
			s = []byte{}
		}
		clear(b)
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
		return nil, fmt.Errorf("signer: secret source %s: only env: and file: are supported: %w", truncate(src[:i+1]), ErrUnsupported)
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
