package keybase

import (
	"context"
	"crypto"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/signerkit/signerkit/internal/ed25519sign"
	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/signer/signertest"
	"github.com/signerkit/signerkit/signer/signertrace"
)

func TestConformance(t *testing.T) {
	t.Parallel() // a store in a directory of its own
	ctx := context.Background()
	s := testStore(t)
	for _, alg := range []signer.Algorithm{signer.Ed25519, signer.ECDSASecp256k1} {
		if _, err := s.GenerateKey(ctx, alg, alg.String()); err != nil {
			t.Fatal(err)
		}
		for _, mode := range []Mode{UnlockOnce, PerSign} {
			t.Run(alg.String()+"/"+mode.String(), func(t *testing.T) {
				cfg := Config{Dir: s.Dir(), Secret: pw, Mode: mode, Key: signer.KeyRef{Label: alg.String()}}
				signertest.Run(t, func() (signer.Signer, error) { return Open(ctx, cfg) }, signertest.Options{})
			})
		}
	}
}

// storeWithKey returns a test store holding one key, "k", for alg.
func storeWithKey(t testing.TB, alg signer.Algorithm) (*Store, signer.KeyInfo) {
	t.Helper()
	s := testStore(t)
	info, err := s.GenerateKey(context.Background(), alg, "k")
	if err != nil {
		t.Fatal(err)
	}
	return s, info
}

// wiped reports whether b is all zeros.
func wiped(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// recorder keeps the stages reported to a trace.
type recorder struct {
	mu     sync.Mutex
	stages []signertrace.StageInfo
}

func (r *recorder) ctx(ctx context.Context) context.Context {
	return signertrace.WithTrace(ctx, &signertrace.Trace{StageDone: func(i signertrace.StageInfo) {
		r.mu.Lock()
		r.stages = append(r.stages, i)
		r.mu.Unlock()
	}})
}

func (r *recorder) take() []signertrace.Stage {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []signertrace.Stage
	for _, i := range r.stages {
		if i.Source != signertrace.Measured || i.Duration < 0 {
			panic("bad report")
		}
		out = append(out, i.Stage)
	}
	r.stages = nil
	return out
}

func TestTraceStages(t *testing.T) {
	s, info := storeWithKey(t, signer.Ed25519)
	ctx := context.Background()
	var rec recorder
	for _, tc := range []struct {
		mode       Mode
		open, sign []signertrace.Stage
	}{
		{UnlockOnce, []signertrace.Stage{signertrace.StageKDF}, []signertrace.Stage{signertrace.StageSign}},
		{PerSign, []signertrace.Stage{signertrace.StageKDF}, []signertrace.Stage{signertrace.StageKDF, signertrace.StageSign}},
	} {
		sg, err := s.with(pw, tc.mode).open(rec.ctx(ctx), "k", 0)
		if err != nil {
			t.Fatal(err)
		}
		if got := rec.take(); !slices.Equal(got, tc.open) {
			t.Errorf("%v open: stages %v, want %v", tc.mode, got, tc.open)
		}
		sig, err := sg.SignContext(rec.ctx(ctx), []byte("m"))
		if err != nil {
			t.Fatal(err)
		}
		if !ed25519.Verify(info.Public.(ed25519.PublicKey), []byte("m"), sig) {
			t.Errorf("%v: signature does not verify", tc.mode)
		}
		if got := rec.take(); !slices.Equal(got, tc.sign) {
			t.Errorf("%v sign: stages %v, want %v", tc.mode, got, tc.sign)
		}
		sg.Close()
	}
}

// A per-sign key derivation stops at the caller's deadline: at cost 25 it
// would run for hours.
func TestPerSignDeadline(t *testing.T) {
	s, _ := storeWithKey(t, signer.Ed25519)
	ctx := context.Background()
	sg, err := s.with(pw, PerSign).open(ctx, "k", 0)
	if err != nil {
		t.Fatal(err)
	}
	defer sg.Close()
	slow := *sg.sealed
	slow.cost = 25
	sg.sealed = &slow
	dctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := sg.SignContext(dctx, []byte("m"))
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("got %v, want DeadlineExceeded", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("SignContext ignored its deadline")
	}
}

// PerSign asks for the Secret on every sign and wipes what it gets.
func TestPerSignPassphrase(t *testing.T) {
	s, info := storeWithKey(t, signer.Ed25519)
	ctx := context.Background()
	var mu sync.Mutex
	var handed [][]byte
	calls := 0
	counting := func() ([]byte, error) {
		mu.Lock()
		defer mu.Unlock()
		calls++
		p, _ := pw()
		handed = append(handed, p)
		return p, nil
	}
	sg, err := s.with(counting, PerSign).open(ctx, "k", 0)
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		sig, err := sg.SignContext(ctx, []byte("m"))
		if err != nil || !ed25519.Verify(info.Public.(ed25519.PublicKey), []byte("m"), sig) {
			t.Fatalf("sign: %v", err)
		}
	}
	sig, err := sg.Sign(nil, []byte("m"), crypto.Hash(0))
	if err != nil || !ed25519.Verify(info.Public.(ed25519.PublicKey), []byte("m"), sig) {
		t.Fatalf("Sign: %v", err)
	}
	sg.Close()
	if calls != 5 {
		t.Errorf("Secret called %d times, want 5 (open and four signs)", calls)
	}
	for _, p := range handed {
		if !wiped(p) {
			t.Fatalf("a passphrase handed over was not wiped: %q", p)
		}
	}
	// A Secret that fails makes the sign fail, with its error.
	fail := false
	flaky := func() ([]byte, error) {
		if fail {
			return nil, errors.New("agent gone")
		}
		return pw()
	}
	sg, _ = s.with(flaky, PerSign).open(ctx, "k", 0)
	defer sg.Close()
	fail = true
	if _, err := sg.SignContext(ctx, []byte("m")); err == nil || err.Error() != `keybase: key "k": passphrase: agent gone` {
		t.Errorf("got %v", err)
	}
}

func TestCloseWipes(t *testing.T) {
	s, _ := storeWithKey(t, signer.Ed25519)
	ctx := context.Background()
	sg, err := s.open(ctx, "k", 0)
	if err != nil {
		t.Fatal(err)
	}
	key := sg.key.x
	if *key == (ed25519sign.PrivateKey{}) {
		t.Fatal("a zero key to begin with")
	}
	sg.Close()
	if *key != (ed25519sign.PrivateKey{}) {
		t.Fatal("Close left the key in memory")
	}
	if _, err := sg.SignContext(ctx, nil); !errors.Is(err, signer.ErrClosed) {
		t.Errorf("got %v", err)
	}
	// secp256k1: the scalar is zeroed.
	if _, err := s.GenerateKey(ctx, signer.ECDSASecp256k1, "k1"); err != nil {
		t.Fatal(err)
	}
	sg, err = s.open(ctx, "k1", 0)
	if err != nil {
		t.Fatal(err)
	}
	k1 := sg.key.k1
	if k1.Key.IsZero() {
		t.Fatal("a zero key to begin with")
	}
	sg.Close()
	if !k1.Key.IsZero() {
		t.Error("Close left the secp256k1 key in memory")
	}
	if _, err := sg.Sign(nil, make([]byte, 32), crypto.SHA256); !errors.Is(err, signer.ErrClosed) {
		t.Errorf("Sign after Close: got %v", err)
	}
}

// OpenArmor on an exported key (Example opens the C.5 one at cost 12).
func TestOpenArmor(t *testing.T) {
	ctx := context.Background()
	want := ed25519.NewKeyFromSeed(katSeed)
	armor, err := EncryptArmor(ctx, want, katPassword, testCost)
	if err != nil {
		t.Fatal(err)
	}
	var rec recorder
	sg, err := OpenArmor(rec.ctx(ctx), armor, signer.SecretBytes(katPassword), UnlockOnce)
	if err != nil {
		t.Fatal(err)
	}
	defer sg.Close()
	if got := rec.take(); !slices.Equal(got, []signertrace.Stage{signertrace.StageKDF}) {
		t.Errorf("open reported %v", got)
	}
	if !want.Public().(ed25519.PublicKey).Equal(sg.Public()) {
		t.Fatal("another key")
	}
	msg := []byte("vote")
	sig, _ := sg.SignContext(ctx, msg)
	if !ed25519.Verify(want.Public().(ed25519.PublicKey), msg, sig) {
		t.Fatal("signature does not verify")
	}
	if _, err := OpenArmor(ctx, armor, pw, PerSign); !errors.Is(err, signer.ErrWrongPassphrase) {
		t.Errorf("wrong passphrase: got %v", err)
	}
	if _, err := OpenArmor(ctx, armor, signer.SecretBytes(katPassword), Mode(9)); !errors.Is(err, signer.ErrInvalidArgument) {
		t.Errorf("unknown mode: got %v", err)
	}
	if _, err := OpenArmor(ctx, []byte("junk"), signer.SecretBytes(katPassword), UnlockOnce); !errors.Is(err, signer.ErrCorrupt) {
		t.Errorf("junk armor: got %v", err)
	}
}

// An unencrypted key (gnokey's empty-passphrase form) is in the clear in
// the parsed block: an UnlockOnce open wipes it once the key is decoded,
// and a PerSign Signer, which keeps it, wipes it on Close.
func TestUnencryptedKeyBytesWiped(t *testing.T) {
	ctx := context.Background()
	k, _ := generate(signer.ECDSASecp256k1)
	armor, err := seal(ctx, k, nil, 0, rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	for _, mode := range []Mode{UnlockOnce, PerSign} {
		s, err := parsePrivateArmor(armor)
		if err != nil || !s.plaintext {
			t.Fatalf("parse: %v", err)
		}
		data := s.data
		sg, err := newSigner(ctx, "", s, k.public(), signer.SecretBytes(nil), mode)
		if err != nil {
			t.Fatal(err)
		}
		msg := []byte("m")
		sig, err := sg.SignContext(ctx, msg)
		if err != nil {
			t.Fatal(err)
		}
		if err := signertest.VerifyStd(signer.ECDSASecp256k1, k.public(), msg, sig); err != nil {
			t.Fatal(err)
		}
		if mode == PerSign && wiped(data) {
			t.Fatalf("%v: the key was wiped while the Signer still needs it", mode)
		}
		sg.Close()
		if !wiped(data) {
			t.Errorf("%v: the unencrypted key bytes outlive the Signer", mode)
		}
	}
}

// OpenKey refuses a ref of another algorithm before deriving the key, and
// returns a nil signer.Signer with its errors.
func TestOpenKeyAlgorithm(t *testing.T) {
	s, info := storeWithKey(t, signer.Ed25519)
	ctx := context.Background()
	keys := s
	var rec recorder
	sg, err := keys.OpenKey(rec.ctx(ctx), signer.KeyRef{Label: "k", Algorithm: signer.ECDSASecp256k1})
	if !errors.Is(err, signer.ErrInvalidArgument) || sg != nil {
		t.Errorf("OpenKey of an Ed25519 key as secp256k1: %v, %v", sg, err)
	}
	if got := rec.take(); len(got) != 0 {
		t.Errorf("a refused OpenKey reported %v", got)
	}
	if sg, err := keys.OpenKey(ctx, signer.KeyRef{Label: "absent"}); !errors.Is(err, signer.ErrKeyNotFound) || sg != nil {
		t.Errorf("OpenKey of a missing key: %v, %v", sg, err)
	}
	sg, err = keys.OpenKey(ctx, signer.KeyRef{Label: "k", Algorithm: signer.Ed25519})
	if err != nil {
		t.Fatal(err)
	}
	defer sg.Close()
	msg := []byte("m")
	sig, err := sg.SignContext(ctx, msg)
	if err != nil {
		t.Fatal(err)
	}
	if err := signertest.VerifyStd(signer.Ed25519, info.Public, msg, sig); err != nil {
		t.Error(err)
	}
}
