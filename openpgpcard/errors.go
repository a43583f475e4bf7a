package openpgpcard

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/signerkit/signerkit/signer"
)

// ctxErr returns the context error err wraps, or nil.
func ctxErr(err error) error {
	switch {
	case errors.Is(err, context.Canceled):
		return context.Canceled
	case errors.Is(err, context.DeadlineExceeded):
		return context.DeadlineExceeded
	}
	return nil
}

// wrapDial gives a dialer's error this package's prefix once.
func wrapDial(err error) error {
	if strings.HasPrefix(err.Error(), prefix) {
		return err
	}
	return fmt.Errorf("openpgpcard: connecting: %w", err)
}

// ErrNoPCSC is returned by the PC/SC dialer in a build without cgo. It
// wraps signer.ErrUnsupported.
var ErrNoPCSC = fmt.Errorf("openpgpcard: PC/SC needs cgo (pcsc-lite), and this build has none: %w", signer.ErrUnsupported)
