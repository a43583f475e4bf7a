package guard

import (
	"context"
	"crypto/ed25519"
	"sync"
	"testing"
	"time"

	"github.com/signerkit/signerkit/signbytes"
	"github.com/signerkit/signerkit/signer/signertrace"
)

// stateRecorder collects the stages reported to it.
type stateRecorder struct {
	mu     sync.Mutex
	stages []signertrace.StageInfo
}

func (s *stateRecorder) trace() *signertrace.Trace {
	return &signertrace.Trace{StageDone: func(i signertrace.StageInfo) {
		s.mu.Lock()
		s.stages = append(s.stages, i)
		s.mu.Unlock()
	}}
}

func (s *stateRecorder) count(st signertrace.Stage) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, i := range s.stages {
		if i.Stage == st {
			n++
		}
	}
	return n
}

// reportingKey hands the Guard its own Trace for the state write.
type reportingKey struct {
	requestKey
	rec *stateRecorder
	tr  *signertrace.Trace
}

func (k *reportingKey) SignGuarded(ctx context.Context, r *Request) ([]byte, error) {
	r.ReportTo(k.tr)
	return k.requestKey.SignGuarded(ctx, r)
}

// TestStateStage: each new signature's state write on a real directory is
// reported once as StageState, measured, to the Trace the RequestSigner
// set with ReportTo, or else to the context's; a sign served from the
// state and a refused one report none.
func TestStateStage(t *testing.T) {
	rec := &stateRecorder{}
	key := &reportingKey{requestKey: requestKey{Fake: newKey(23)}, rec: rec}
	key.tr = rec.trace()
	g, err := New(key, Config{Dir: t.TempDir(), AutoInit: true})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	ts := time.Unix(1777636800, 0)
	ctx := context.Background()
	pub := key.Public().(ed25519.PublicKey)
	for h := int64(1); h <= 3; h++ {
		b := msg(t, signbytes.TM2, chainID, signbytes.Prevote, h, 0, 1, ts)
		s, err := g.SignBytes(ctx, b)
		if err != nil || !ed25519.Verify(pub, b, s.Signature) {
			t.Fatalf("height %d: %v", h, err)
		}
		if _, err := g.SignBytes(ctx, b); err != nil { // from the state: no write
			t.Fatal(err)
		}
	}
	if _, err := g.SignBytes(ctx, msg(t, signbytes.TM2, chainID, signbytes.Prevote, 2, 0, 1, ts)); err == nil {
		t.Fatal("a height regression was signed")
	}
	if n := rec.count(signertrace.StageState); n != 3 {
		t.Fatalf("%d state writes reported, want 3", n)
	}
	for _, i := range rec.stages {
		if i.Source != signertrace.Measured || i.Duration <= 0 {
			t.Fatalf("state stage %+v: want measured and positive", i)
		}
	}

	// A key that sets no Trace: the context's gets the write.
	plain := &requestKey{Fake: newKey(24)}
	g2, err := New(plain, Config{FS: &MemFS{}, AutoInit: true})
	if err != nil {
		t.Fatal(err)
	}
	defer g2.Close()
	rec2 := &stateRecorder{}
	if _, err := g2.SignBytes(signertrace.WithTrace(ctx, rec2.trace()), msg(t, signbytes.TM2, chainID, signbytes.Precommit, 1, 0, 1, ts)); err != nil {
		t.Fatal(err)
	}
	if n := rec2.count(signertrace.StageState); n != 1 {
		t.Fatalf("%d state writes reported to the context's Trace, want 1", n)
	}
}
