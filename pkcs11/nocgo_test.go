//go:build !cgo

package pkcs11_test

import (
	"context"
	"errors"
	"testing"

	"github.com/signerkit/signerkit/pkcs11"
	"github.com/signerkit/signerkit/signer"
)

func TestNoCgo(t *testing.T) {
	ctx := context.Background()
	if _, err := pkcs11.Open(ctx, pkcs11.Config{Module: "/usr/lib/softhsm/libsofthsm2.so"}); !errors.Is(err, signer.ErrUnsupported) {
		t.Errorf("Open without cgo: %v, want ErrUnsupported", err)
	}
	if _, err := pkcs11.OpenURI(ctx, "pkcs11:object=k", nil); !errors.Is(err, signer.ErrUnsupported) {
		t.Errorf("OpenURI without cgo: %v, want ErrUnsupported", err)
	}
	if _, err := pkcs11.OpenURI(ctx, "pkcs11:object=k;object=j", nil); !errors.Is(err, signer.ErrInvalidArgument) {
		t.Errorf("OpenURI of a bad URI without cgo: %v, want ErrInvalidArgument", err)
	}
}
