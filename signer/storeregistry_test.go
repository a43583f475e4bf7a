package signer_test

import (
	"context"
	"errors"
	"testing"

	"github.com/signerkit/signerkit/signer"
)

type nopStore struct{}

func (nopStore) Close() error { return nil }

func TestStoreRegistry(t *testing.T) {
	signer.RegisterStore("storetest", func(_ context.Context, uri string) (signer.Store, signer.KeyRef, error) {
		return nopStore{}, signer.KeyRef{Label: uri}, nil
	})
	st, ref, err := signer.OpenStore(context.Background(), "storetest:x")
	if err != nil || st == nil || ref.Label != "storetest:x" {
		t.Fatalf("OpenStore: %v, %+v, %v", st, ref, err)
	}
	_, _, err = signer.OpenStore(context.Background(), "nosuchstore:x")
	var ue *signer.URIError
	if !errors.As(err, &ue) || !errors.Is(err, signer.ErrUnsupported) {
		t.Fatalf("an unregistered scheme: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := signer.OpenStore(ctx, "storetest:x"); !errors.Is(err, context.Canceled) {
		t.Fatalf("a done context: %v", err)
	}
	defer func() {
		if recover() == nil {
			t.Fatal("RegisterStore twice did not panic")
		}
	}()
	signer.RegisterStore("storetest", func(context.Context, string) (signer.Store, signer.KeyRef, error) {
		return nil, signer.KeyRef{}, nil
	})
}
