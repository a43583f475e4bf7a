package keyuri

import (
	"context"
	"errors"
	"testing"

	"github.com/signerkit/signerkit/signer"
)

type testCfg struct{ Key signer.KeyRef }

type testStore struct{ cfg testCfg }

func (*testStore) Close() error { return nil }

func TestStoreOpener(t *testing.T) {
	parse := func(uri string) (testCfg, error) {
		if uri == "bad" {
			return testCfg{}, errors.New("bad URI")
		}
		return testCfg{Key: signer.KeyRef{Label: uri}}, nil
	}
	var opened []testCfg
	open := func(_ context.Context, c testCfg) (*testStore, error) {
		opened = append(opened, c)
		return &testStore{c}, nil
	}
	o := StoreOpener(parse, func(c *testCfg) signer.KeyRef { return c.Key }, open)
	st, ref, err := o(context.Background(), "k")
	if err != nil || ref.Label != "k" || st.(*testStore).cfg.Key.Label != "k" {
		t.Fatalf("OpenStore: %+v, %+v, %v", st, ref, err)
	}
	if _, _, err := o(context.Background(), "bad"); err == nil || len(opened) != 1 {
		t.Fatalf("a bad URI: %v, %d opened", err, len(opened))
	}
}
