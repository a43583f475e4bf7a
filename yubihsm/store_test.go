package yubihsm_test

import (
	"context"
	"crypto"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/yubihsm"
	"github.com/signerkit/signerkit/yubihsm/yubihsmsim"
)

func TestKeyManagement(t *testing.T) {
	dev, url := sim(t, yubihsmsim.Config{})
	c := openStore(t, config(url))
	ctx := context.Background()
	ki := generate(t, c, signer.Ed25519, "managed")
	id, err := yubihsm.ParseID(ki.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, ref := range []signer.KeyRef{{ID: ki.ID}, {Label: "managed"}, {ID: "0x" + ki.ID, Label: "managed"}} {
		keys, err := c.FindKeys(ctx, ref)
		if err != nil || len(keys) != 1 || keys[0].ID != ki.ID {
			t.Errorf("FindKeys(%v) = %v, %v", ref, keys, err)
		}
	}
	pub, err := c.PublicKey(ctx, id)
	if err != nil || !ki.Public.(interface{ Equal(crypto.PublicKey) bool }).Equal(pub) {
		t.Errorf("PublicKey: %v", err)
	}
	if s, err := c.OpenKey(ctx, signer.KeyRef{ID: ki.ID, Algorithm: signer.ECDSAP256}); !errors.Is(err, signer.ErrUnsupported) || s != nil {
		t.Errorf("opening an Ed25519 key as P-256: %v, %v; want a nil Signer and ErrUnsupported", s, err)
	}
	for _, label := range []string{"", string(make([]byte, 41)), "nul\x00"} {
		if _, err := c.GenerateKey(ctx, signer.Ed25519, label); !errors.Is(err, signer.ErrInvalidArgument) {
			t.Errorf("GenerateKey with label %q: %v", label, err)
		}
	}
	if _, err := c.GenerateKey(ctx, signer.BLS12381MinSig, "bls"); !errors.Is(err, signer.ErrUnsupported) {
		t.Errorf("GenerateKey(BLS): %v", err)
	}
	// An authentication key that may only sign cannot manage keys.
	dev.AddAuthKey(2, "signer", []byte("signing only"), yubihsmsim.CapSignEdDSA, 0, 0xffff)
	signOnly := openStore(t, yubihsm.Config{Connector: url, AuthKeyID: 2, Secret: signer.SecretBytes([]byte("signing only"))})
	if _, err := signOnly.GenerateKey(ctx, signer.Ed25519, "denied"); !errors.Is(err, signer.ErrPermissionDenied) {
		t.Errorf("GenerateKey without the capability: %v", err)
	}
	if err := signOnly.DeleteKey(ctx, ki.Ref()); !errors.Is(err, signer.ErrPermissionDenied) {
		t.Errorf("DeleteKey without the capability: %v", err)
	}
	signOK(t, openSigner(t, signOnly, ki.Ref()), "with a sign-only authentication key")
	info, err := c.DeviceInfo(ctx)
	if err != nil || info.Serial != dev.Serial() || info.Major != 2 {
		t.Errorf("DeviceInfo: %+v, %v", info, err)
	}
	st, err := c.Status(ctx)
	if err != nil || !st.OK {
		t.Errorf("Status: %+v, %v", st, err)
	}
}

// TestConcurrentStoreClose closes a Store from eight goroutines at once:
// the Signer opened from it must keep working, so the connection it shares
// must be released once, not once per Close that saw the Store open. (The
// check-then-close this replaced failed here in 3 of 10 runs with -race.)
func TestConcurrentStoreClose(t *testing.T) {
	_, url := sim(t, yubihsmsim.Config{})
	for i := range 20 {
		st := openStore(t, config(url))
		k := openSigner(t, st, generate(t, st, signer.Ed25519, fmt.Sprintf("close-%d", i)).Ref())
		var wg sync.WaitGroup
		for range 8 {
			wg.Add(1)
			go func() { defer wg.Done(); st.Close() }()
		}
		wg.Wait()
		signOK(t, k, fmt.Sprintf("after closing its Store from 8 goroutines (round %d)", i))
		k.Close()
	}
}
