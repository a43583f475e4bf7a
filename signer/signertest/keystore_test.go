package signertest_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/signerkit/signerkit/inprocess"
	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/signer/signertest"
)

// A good store passes; each broken store below is caught.
// Each case checks a store of its own, so the cases run in parallel (most
// of their time is RSA key generation).
func TestCheckKeyStore(t *testing.T) {
	t.Parallel()
	opts := signertest.KeyStoreOptions{Algorithms: []signer.Algorithm{signer.Ed25519, signer.ECDSASecp256k1, signer.RSAPSS}}
	t.Run("good", func(t *testing.T) {
		t.Parallel()
		good := &inprocess.Store{}
		if err := signertest.CheckKeyStore(good, opts); err != nil {
			t.Fatalf("the in-process store fails: %v", err)
		}
		if keys, _ := good.ListKeys(context.Background()); len(keys) != 0 {
			t.Errorf("CheckKeyStore left %d keys behind", len(keys))
		}
	})

	cases := []struct {
		name  string
		store any
		want  string
	}{
		{"not a store", struct{}{}, "does not implement signer.KeyLister"},
		{"lists nothing", &hidesKeys{Store: &inprocess.Store{}}, "does not list"},
		{"overwrites a label", &overwrites{Store: &inprocess.Store{}}, "ErrKeyExists"},
		{"delete keeps the key", &keepsDeleted{Store: &inprocess.Store{}}, "after DeleteKey"},
		{"opens another key", &opensOther{Store: &inprocess.Store{}}, "another public key"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := signertest.CheckKeyStore(tc.store, opts)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s: got %v, want a failure mentioning %q", tc.name, err, tc.want)
			}
		})
	}
}

type hidesKeys struct{ *inprocess.Store }

func (h *hidesKeys) ListKeys(context.Context) ([]signer.KeyInfo, error) { return nil, nil }

type overwrites struct{ *inprocess.Store }

func (o *overwrites) GenerateKey(ctx context.Context, alg signer.Algorithm, label string) (signer.KeyInfo, error) {
	o.Store.DeleteKey(ctx, signer.KeyRef{Label: label})
	return o.Store.GenerateKey(ctx, alg, label)
}

type keepsDeleted struct{ *inprocess.Store }

func (k *keepsDeleted) DeleteKey(context.Context, signer.KeyRef) error { return nil }

type opensOther struct{ *inprocess.Store }

func (o *opensOther) OpenKey(ctx context.Context, ref signer.KeyRef) (signer.Signer, error) {
	s, err := o.Store.OpenKey(ctx, ref)
	if err != nil {
		return nil, err
	}
	s.Close()
	alg, _ := signer.AlgorithmOf(s)
	if alg.IsRSA() {
		// The package's shared RSA key (inprocess.Store made the stored
		// one) serves every open: generating a 2048-bit key per open made
		// this case the slowest of the package.
		keys, err := rsaKeys()
		if err != nil {
			return nil, fmt.Errorf("opensOther: %w", err)
		}
		return inprocess.FromPrivateKey(keys[0], alg)
	}
	k, err := inprocess.Generate(alg)
	if err != nil {
		return nil, fmt.Errorf("opensOther: %w", err)
	}
	return k, nil
}
