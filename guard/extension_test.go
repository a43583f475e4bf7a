package guard

import (
	"context"
	"crypto/ed25519"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/signerkit/signerkit/signbytes"
	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/signer/signertest"
)

// pairKey is a key whose precommit signs each wait (a bounded wait, for
// liveness) until the extension of their height and round has been
// asked of the key: it counts the precommits whose extension it was
// asked for before it answered them, that is, the pairs signed together.
type pairKey struct {
	*signertest.Fake
	mu       sync.Mutex
	started  map[[2]int64]bool // the extensions asked, by height and round
	overlaps int
	fail     map[signbytes.Phase]error
}

func newPairKey(seed byte) *pairKey {
	return &pairKey{Fake: newKey(seed), started: map[[2]int64]bool{}, fail: map[signbytes.Phase]error{}}
}

func (k *pairKey) SignGuarded(ctx context.Context, r *Request) ([]byte, error) {
	m := r.Message()
	hr := [2]int64{m.Height, m.Round}
	k.mu.Lock()
	err := k.fail[m.Phase]
	if m.Phase == signbytes.VoteExtension {
		k.started[hr] = true
	}
	k.mu.Unlock()
	if m.Phase == signbytes.Precommit {
		for start := time.Now(); time.Since(start) < 2*time.Second; time.Sleep(time.Millisecond) {
			k.mu.Lock()
			ok := k.started[hr]
			if ok {
				k.overlaps++
			}
			k.mu.Unlock()
			if ok {
				break
			}
		}
	}
	if err != nil {
		return nil, err
	}
	return k.SignContext(ctx, r.SignBytes())
}

func (k *pairKey) overlapped() int { k.mu.Lock(); defer k.mu.Unlock(); return k.overlaps }

func pair(h, r int64, block, ext byte, ts time.Time) (pre, x signbytes.Message) {
	pre = signbytes.Message{Format: signbytes.CometBFT, Phase: signbytes.Precommit, Height: h, Round: r,
		BlockID: blockID(block), Timestamp: ts, ChainID: chainID}
	x = signbytes.Message{Format: signbytes.CometBFT, Phase: signbytes.VoteExtension, Height: h, Round: r,
		ChainID: chainID, Extension: []byte{ext}}
	return pre, x
}

func verifyPair(t *testing.T, pub ed25519.PublicKey, pre, x signbytes.Message, v, e Signed) {
	t.Helper()
	for _, c := range []struct {
		m signbytes.Message
		s Signed
	}{{pre, v}, {x, e}} {
		b, err := c.m.Bytes()
		if err != nil {
			t.Fatal(err)
		}
		if c.m.Phase == signbytes.Precommit && v.TimestampChanged {
			b = v.SignBytes
		}
		if !ed25519.Verify(pub, b, c.s.Signature) || string(b) != string(c.s.SignBytes) {
			t.Fatalf("%v: the signature does not verify over the request's bytes", c.m.Phase)
		}
	}
}

func TestSignWithExtension(t *testing.T) {
	ctx := context.Background()
	key := newPairKey(7)
	g, err := New(key, Config{Dir: t.TempDir(), AutoInit: true})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	pub := key.PublicKey()
	pre, x := pair(5, 0, 0xaa, 0x42, baseTime)
	v, e, err := g.SignWithExtension(ctx, pre, x)
	if err != nil {
		t.Fatal(err)
	}
	verifyPair(t, pub, pre, x, v, e)
	if key.overlapped() != 1 || key.Signs() != 2 {
		t.Fatalf("%d overlapping signs of %d, want the pair signed together", key.overlapped(), key.Signs())
	}
	st := g.Stats()
	if st.Signs != 2 || st.Syncs != 1 {
		t.Fatalf("stats %+v: want 2 signs and 1 sync", st)
	}
	// The same bytes again (a second sentry): both cached, the key idle.
	v2, e2, err := g.SignWithExtension(ctx, pre, x)
	if err != nil || !v2.Cached || !e2.Cached || string(v2.Signature) != string(v.Signature) || string(e2.Signature) != string(e.Signature) {
		t.Fatalf("replay: %v, cached %v %v", err, v2.Cached, e2.Cached)
	}
	// Only the timestamp differs: the earlier precommit, the extension cached.
	v3, e3, err := g.SignWithExtension(ctx, func() signbytes.Message { p := pre; p.Timestamp = baseTime.Add(time.Second); return p }(), x)
	if err != nil || !v3.TimestampChanged || !v3.Timestamp.Equal(baseTime) || !e3.Cached {
		t.Fatalf("timestamp replay: %v %+v", err, v3)
	}
	// Another extension for the same precommit: signed (no state), not cached.
	x4 := x
	x4.Extension = []byte{0x43}
	v4, e4, err := g.SignWithExtension(ctx, pre, x4)
	if err != nil || e4.Cached {
		t.Fatalf("new extension: %v", err)
	}
	verifyPair(t, pub, pre, x4, v4, e4)
	if key.Signs() != 3 {
		t.Fatalf("%d signs by the key, want 3", key.Signs())
	}
	// The state holds the precommit, not an extension.
	if s, err := g.State(ctx, chainID); err != nil || s.Height != 5 || s.Step != signbytes.Precommit.Step() || string(s.Signature) != string(v.Signature) {
		t.Fatalf("state %+v, %v", s, err)
	}
}

func TestSignWithExtensionRefused(t *testing.T) {
	ctx := context.Background()
	key := newPairKey(8)
	g, err := New(key, Config{Dir: t.TempDir(), AutoInit: true})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	pre, x := pair(5, 1, 0xaa, 0x42, baseTime)
	if _, _, err := g.SignWithExtension(ctx, pre, x); err != nil {
		t.Fatal(err)
	}
	signs := key.Signs()
	// A conflicting precommit, a lower round: refused, and the key is not
	// asked for the extension either.
	for _, p := range []signbytes.Message{
		func() signbytes.Message { p, _ := pair(5, 1, 0xbb, 0x42, baseTime); return p }(),
		func() signbytes.Message { p, _ := pair(5, 0, 0xaa, 0x42, baseTime); return p }(),
		func() signbytes.Message { p, _ := pair(4, 3, 0xaa, 0x42, baseTime); return p }(),
	} {
		xx := x
		xx.Height, xx.Round = p.Height, p.Round
		v, e, err := g.SignWithExtension(ctx, p, xx)
		mustErr(t, err, signer.ErrDoubleSign)
		if v.Signature != nil || e.Signature != nil {
			t.Fatal("a refused precommit released a signature")
		}
	}
	if key.Signs() != signs {
		t.Fatalf("the key signed %d times for refused precommits", key.Signs()-signs)
	}
	// Mismatched pairs are invalid.
	p6, x6 := pair(6, 0, 0xaa, 0x42, baseTime)
	for name, bad := range map[string][2]signbytes.Message{
		"other height":  {p6, func() signbytes.Message { y := x6; y.Height = 7; return y }()},
		"other round":   {p6, func() signbytes.Message { y := x6; y.Round = 1; return y }()},
		"other chain":   {p6, func() signbytes.Message { y := x6; y.ChainID = "other"; return y }()},
		"nil block":     {func() signbytes.Message { y := p6; y.BlockID = signbytes.BlockID{}; return y }(), x6},
		"prevote":       {func() signbytes.Message { y := p6; y.Phase = signbytes.Prevote; return y }(), x6},
		"two votes":     {p6, p6},
		"tm2 precommit": {func() signbytes.Message { y := p6; y.Format = signbytes.TM2; return y }(), x6},
	} {
		if _, _, err := g.SignWithExtension(ctx, bad[0], bad[1]); !errors.Is(err, signer.ErrInvalidMessage) {
			t.Fatalf("%s: %v, want ErrInvalidMessage", name, err)
		}
	}
}

// A precommit whose state write fails, or whose key sign fails, releases
// no extension, though the key signed it concurrently.
func TestSignWithExtensionDropped(t *testing.T) {
	ctx := context.Background()
	key := newPairKey(9)
	fsys := &faultFS{FS: DirFS(t.TempDir())}
	g, err := New(key, Config{FS: fsys, AutoInit: true})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	pre, x := pair(5, 0, 0xaa, 0x42, baseTime)
	if _, _, err := g.SignWithExtension(ctx, pre, x); err != nil { // creates the state
		t.Fatal(err)
	}
	pre, x = pair(6, 0, 0xaa, 0x42, baseTime)
	fsys.mu.Lock()
	fsys.syncErr = errors.New("disk gone")
	fsys.mu.Unlock()
	v, e, err := g.SignWithExtension(ctx, pre, x)
	var se *StorageError
	if !errors.As(err, &se) || v.Signature != nil || e.Signature != nil {
		t.Fatalf("sync failure: %v, signatures released: %v %v", err, v.Signature != nil, e.Signature != nil)
	}
	if key.overlapped() != 2 {
		t.Fatalf("%d overlapping pairs, want the extension signed speculatively", key.overlapped())
	}

	key2 := newPairKey(10)
	key2.fail[signbytes.Precommit] = errors.New("party down")
	g2, err := New(key2, Config{Dir: t.TempDir(), AutoInit: true})
	if err != nil {
		t.Fatal(err)
	}
	defer g2.Close()
	v, e, err = g2.SignWithExtension(ctx, pre, x)
	if err == nil || v.Signature != nil || e.Signature != nil {
		t.Fatalf("key failure: %v, signatures released", err)
	}
	// The extension is not filed for a replay either: alone it is refused.
	if _, err := g2.SignConsensus(ctx, x); !errors.Is(err, signer.ErrDoubleSign) {
		t.Fatalf("extension after a failed precommit: %v", err)
	}

	// The precommit signed, its extension's sign failed: an error, the
	// precommit recorded; asked again, the precommit is cached and the
	// extension signed.
	key3 := newPairKey(11)
	key3.fail[signbytes.VoteExtension] = errors.New("party down")
	g3, err := New(key3, Config{Dir: t.TempDir(), AutoInit: true})
	if err != nil {
		t.Fatal(err)
	}
	defer g3.Close()
	if _, _, err := g3.SignWithExtension(ctx, pre, x); err == nil {
		t.Fatal("extension failure not reported")
	}
	delete(key3.fail, signbytes.VoteExtension)
	v, e, err = g3.SignWithExtension(ctx, pre, x)
	if err != nil || !v.Cached || e.Cached {
		t.Fatalf("retry: %v, cached %v %v", err, v.Cached, e.Cached)
	}
	verifyPair(t, key3.PublicKey(), pre, x, v, e)
}
