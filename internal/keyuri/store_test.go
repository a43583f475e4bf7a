package keyuri

import (
	"context"
	"errors"
	"testing"

	"github.com/signerkit/signerkit/signer"
)

type testCfg struct {
	Secret signer.Secret
	Key    signer.KeyRef
}

type testStore struct{ cfg testCfg }

func (*testStore) Close() error { return nil }

func TestStoreOpener(t *testing.T) {
	parse := func(uri string) (testCfg, error) {
		if uri == "bad" {
			return testCfg{}, errors.New("bad URI")
		}
		c := testCfg{Key: signer.KeyRef{Label: uri}}
		if uri == "with-secret" {
			c.Secret = signer.SecretBytes([]byte("from the URI"))
		}
		return c, nil
	}
	var opened []testCfg
	open := func(_ context.Context, c testCfg) (*testStore, error) {
		opened = append(opened, c)
		return &testStore{c}, nil
	}
	o := StoreOpener(parse, func(c *testCfg) (*signer.Secret, *signer.KeyRef) { return &c.Secret, &c.Key }, open)
	given := signer.SecretBytes([]byte("the caller's"))
	secretOf := func(s signer.Store) string {
		b, err := s.(*testStore).cfg.Secret()
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	st, ref, err := o(context.Background(), "k", given)
	if err != nil || ref.Label != "k" || secretOf(st) != "the caller's" {
		t.Fatalf("no secret in the URI: %+v, %+v, %v", st, ref, err)
	}
	st, _, err = o(context.Background(), "with-secret", given)
	if err != nil || secretOf(st) != "from the URI" {
		t.Fatalf("the URI's own secret was replaced: %v", err)
	}
	if _, _, err := o(context.Background(), "bad", given); err == nil || len(opened) != 2 {
		t.Fatalf("a bad URI: %v, %d opened", err, len(opened))
	}
}
