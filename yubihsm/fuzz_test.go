package yubihsm

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/certusone/yubihsm-go/commands"

	"github.com/signerkit/signerkit/signer"
)

// FuzzCheckResponse checks that every outer frame checkResponse lets
// through can be parsed by yubihsm-go's ParseResponse without a panic
// (which, unguarded, panics on short session messages and device info).
func FuzzCheckResponse(f *testing.F) {
	f.Add(byte(0x05), []byte{0x85, 0x00, 0x01, 0x00})
	f.Add(byte(0x06), []byte{0x86, 0x00, 0x02, 0x02, 0x04})
	f.Add(byte(0x03), []byte{0x83, 0x00, 0x11, 0, 1, 2, 3, 4, 5, 6, 7, 8, 1, 2, 3, 4, 5, 6, 7, 8})
	f.Add(byte(0x04), []byte{0x84, 0x00, 0x00})
	f.Add(byte(0x01), []byte{0x7f, 0x00, 0x01, 0x03})
	f.Add(byte(0x01), []byte{0x7f, 0x00, 0x00})
	f.Fuzz(func(t *testing.T, cmd byte, b []byte) {
		switch cmd {
		case 0x01, 0x03, 0x04, 0x05, 0x06: // the outer commands we send
		default:
			return
		}
		err := checkResponse(cmd, b)
		var de *DeviceError
		switch {
		case err == nil:
			commands.ParseResponse(b)
		case errors.As(err, &de):
			if !errors.Is(err, de.Unwrap()) || de.Error() == "" {
				t.Fatal("DeviceError does not unwrap")
			}
		case !errors.Is(err, signer.ErrProtocol):
			t.Fatalf("checkResponse error %v does not wrap ErrProtocol", err)
		}
	})
}

func FuzzParseStatus(f *testing.F) {
	f.Add([]byte("status=OK\nserial=0012345678\nversion=3.0.4\npid=1\naddress=localhost\nport=12345\n"))
	f.Add([]byte("status=NO_DEVICE\nserial=*\n"))
	f.Add([]byte("status\n=\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := parseStatus(b)
		if err != nil && !errors.Is(err, signer.ErrProtocol) {
			t.Fatal(err)
		}
		if s.OK && !bytes.Contains(b, []byte("status=OK")) {
			t.Fatalf("OK without status=OK in %q", b)
		}
	})
}

// TestWrapPrefixOnce: however deep errors of the package nest, their
// message starts with "yubihsm: " once.
func TestWrapPrefixOnce(t *testing.T) {
	inner := []error{
		&DeviceError{Code: CodeObjectNotFound, Command: 0x6a},
		&transportError{err: errors.New("connection refused")},
		&transportError{status: 500},
		&protocolError{"garbled"},
		errPoolClosed,
		fmt.Errorf("yubihsm: waiting for a session: %w", errors.New("deadline")),
		signer.ErrClosed,
	}
	for _, err := range inner {
		for _, e := range []error{wrap(err, "sign with 0a01"), wrap(wrap(err, "object 0a01"), "list objects")} {
			msg := e.Error()
			if !strings.HasPrefix(msg, "yubihsm: ") || strings.Count(msg, "yubihsm:") != 1 {
				t.Errorf("%q: want one yubihsm: prefix", msg)
			}
			if !errors.Is(e, err) {
				t.Errorf("%q does not wrap %v", msg, err)
			}
		}
	}
}
