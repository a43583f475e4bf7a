//go:build !cgo

package pkcs11_test

import (
	"context"
	"errors"
	"testing"

	"github.com/signerkit/signerkit/pkcs11"
	"github.com/signerkit/signerkit/signer"
)

// TestNoCgo: without cgo every open fails with ErrUnsupported, through the
// package and through signer.Open, while URIs are still checked.
func TestNoCgo(t *testing.T) {
	ctx := context.Background()
	cfg := pkcs11.Config{Module: "/usr/lib/softhsm/libsofthsm2.so", Key: signer.KeyRef{Label: "k"}}
	if k, err := pkcs11.Open(ctx, cfg); !errors.Is(err, signer.ErrUnsupported) || k != nil {
		t.Errorf("Open without cgo: %v, %v; want ErrUnsupported", k, err)
	}
	if st, err := pkcs11.OpenStore(ctx, cfg); !errors.Is(err, signer.ErrUnsupported) || st != nil {
		t.Errorf("OpenStore without cgo: %v, %v; want ErrUnsupported", st, err)
	}
	if s, err := signer.Open(ctx, "pkcs11:object=k?module-path=/m.so"); !errors.Is(err, signer.ErrUnsupported) || s != nil {
		t.Errorf("signer.Open without cgo: %v, %v; want a nil Signer and ErrUnsupported", s, err)
	}
	var ue *signer.URIError
	if s, err := signer.Open(ctx, "pkcs11:object=k;object=j"); !errors.Is(err, signer.ErrInvalidArgument) || !errors.As(err, &ue) || ue.Attr != "object" || s != nil {
		t.Errorf("signer.Open of a bad URI without cgo: %v, %v; want ErrInvalidArgument naming object", s, err)
	}
}
