package ledger_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/hex"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/signerkit/signerkit/ledger"
	"github.com/signerkit/signerkit/ledger/ledgersim"
	"github.com/signerkit/signerkit/signbytes/signbytestest"
	"github.com/signerkit/signerkit/signer"
)

// countingDialer counts the transports dial made that are still open.
type countingDialer struct {
	mu   sync.Mutex
	dev  *ledgersim.Device // swapped to model another Ledger
	open int
}

func (c *countingDialer) dial(context.Context) (ledger.Transport, error) {
	c.mu.Lock()
	dev := c.dev
	c.mu.Unlock()
	tr, err := dev.Transport()
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.open++
	c.mu.Unlock()
	return &countedTransport{Transport: tr, c: c}, nil
}

func (c *countingDialer) opened() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.open
}

type countedTransport struct {
	ledger.Transport
	c    *countingDialer
	once sync.Once
}

func (t *countedTransport) Close() error {
	t.once.Do(func() {
		t.c.mu.Lock()
		t.c.open--
		t.c.mu.Unlock()
	})
	return t.Transport.Close()
}

func signWith(t *testing.T, s signer.Signer, pub ed25519.PublicKey, msg []byte) {
	t.Helper()
	sig, err := s.SignContext(context.Background(), msg)
	if err != nil {
		t.Fatalf("sign: %v", err)
	}
	if !ed25519.Verify(pub, msg, sig) {
		t.Fatal("signature does not verify under the expected key")
	}
}

func TestStore(t *testing.T) {
	ctx := context.Background()
	seed := bytes.Repeat([]byte{3}, 32)
	want := ed25519.NewKeyFromSeed(seed).Public().(ed25519.PublicKey)
	dialer := &countingDialer{dev: ledgersim.MustNew(ledgersim.Config{Seed: seed, Time: ledgersim.Accounted})}
	st, err := ledger.OpenStore(ctx, ledger.Config{Dial: dialer.dial, ChunkSize: 64})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if n := dialer.opened(); n != 0 {
		t.Errorf("OpenStore left %d transports open, want none", n)
	}
	var store any = st
	for name, ok := range map[string]bool{
		"KeyGenerator": implements[signer.KeyGenerator](store),
		"KeyImporter":  implements[signer.KeyImporter](store),
		"KeyDeleter":   implements[signer.KeyDeleter](store),
	} {
		if ok {
			t.Errorf("Store implements signer.%s, which the validator app cannot do", name)
		}
	}

	keys, err := st.ListKeys(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 1 {
		t.Fatalf("ListKeys: %d keys, want 1", len(keys))
	}
	k := keys[0]
	if k.Label != "" || k.ID != hex.EncodeToString(want) || k.Algorithm != signer.Ed25519 {
		t.Errorf("ListKeys: %+v, want no label, id %x, Ed25519", k, want)
	}
	if pub, ok := k.Public.(ed25519.PublicKey); !ok || !pub.Equal(want) {
		t.Errorf("ListKeys: public key %x, want the seed's %x", k.Public, want)
	}
	keys[0].Public.(ed25519.PublicKey)[0] ^= 1 // the caller's copy
	if again, _ := st.ListKeys(ctx); !again[0].Public.(ed25519.PublicKey).Equal(want) {
		t.Error("changing a listed key's Public changed the store's")
	}

	heights := signbytestest.NewHeights("", 1)
	for _, ref := range []signer.KeyRef{
		{},
		k.Ref(),
		{ID: strings.ToUpper(k.ID)},
		{Algorithm: signer.Ed25519},
		{ID: k.ID, Algorithm: signer.Ed25519},
	} {
		s, err := st.OpenKey(ctx, ref)
		if err != nil {
			t.Errorf("OpenKey(%v): %v", ref, err)
			continue
		}
		ls, ok := s.(*ledger.Signer)
		if !ok || ls.ChunkSize() != 64 {
			t.Errorf("OpenKey(%v): %T, want a *ledger.Signer with the store's Config", ref, s)
		}
		signWith(t, s, want, heights.Next(signbytestest.KindPrevote))
		s.Close()
	}
	for _, tc := range []struct {
		ref  signer.KeyRef
		want error
	}{
		{signer.KeyRef{Label: "validator"}, signer.ErrKeyNotFound},
		{signer.KeyRef{ID: "00"}, signer.ErrKeyNotFound},
		{signer.KeyRef{ID: k.ID, Label: "validator"}, signer.ErrKeyNotFound},
		{signer.KeyRef{Algorithm: signer.ECDSAP256}, signer.ErrUnsupported},
		{signer.KeyRef{Algorithm: signer.RSAPSS}, signer.ErrUnsupported},
	} {
		s, err := st.OpenKey(ctx, tc.ref)
		if !errors.Is(err, tc.want) || s != nil {
			t.Errorf("OpenKey(%v): %v, %v; want an error wrapping %v", tc.ref, s, err, tc.want)
		}
		checkPrefix(t, "OpenKey", err)
	}
	if n := dialer.opened(); n != 0 {
		t.Errorf("%d transports left open after closing every Signer", n)
	}

	// Another Ledger (or seed) in its place: a ref by ID no longer finds
	// the key, and the transport opened to find out is closed; the zero
	// ref opens the new key.
	other := ledgersim.MustNew(ledgersim.Config{Seed: bytes.Repeat([]byte{4}, 32), Time: ledgersim.Accounted})
	dialer.mu.Lock()
	dialer.dev = other
	dialer.mu.Unlock()
	if s, err := st.OpenKey(ctx, k.Ref()); !errors.Is(err, signer.ErrKeyNotFound) || s != nil {
		t.Errorf("OpenKey(%v) with another device: %v, %v; want ErrKeyNotFound", k.Ref(), s, err)
	}
	if n := dialer.opened(); n != 0 {
		t.Errorf("%d transports left open after refusing another device's key", n)
	}
	s, err := st.OpenKey(ctx, signer.KeyRef{})
	if err != nil {
		t.Fatal(err)
	}
	signWith(t, s, other.PublicKey(), signbytestest.NewHeights("", 1).Next(signbytestest.KindPrevote))
	s.Close()

	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, err := st.ListKeys(ctx); !errors.Is(err, signer.ErrClosed) {
		t.Errorf("ListKeys after Close: %v", err)
	}
	if s, err := st.OpenKey(ctx, signer.KeyRef{}); !errors.Is(err, signer.ErrClosed) || s != nil {
		t.Errorf("OpenKey after Close: %v, %v", s, err)
	}
}

func implements[T any](v any) bool {
	_, ok := v.(T)
	return ok
}

func TestOpenStoreRefusals(t *testing.T) {
	locked := ledgersim.MustNew(ledgersim.Config{})
	locked.SetLocked(true)
	for _, tc := range []struct {
		name string
		cfg  ledger.Config
		want error
	}{
		{"locked", ledger.Config{Dial: locked.Dialer()}, signer.ErrDeviceLocked},
		{"chunk size", ledger.Config{Dial: locked.Dialer(), ChunkSize: 300}, signer.ErrInvalidArgument},
	} {
		st, err := ledger.OpenStore(context.Background(), tc.cfg)
		if !errors.Is(err, tc.want) || st != nil {
			t.Errorf("%s: %v, %v; want an error wrapping %v", tc.name, st, err, tc.want)
		}
	}
}
