package guard

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"testing"
	"time"

	"github.com/signerkit/signerkit/signbytes"
	"github.com/signerkit/signerkit/signer/signertest"
)

// requestKey is a key that is told what it signs: it records each
// Request the Guard hands it.
type requestKey struct {
	*signertest.Fake
	got []signbytes.Message
}

func (k *requestKey) SignGuarded(ctx context.Context, r *Request) ([]byte, error) {
	k.got = append(k.got, r.Message())
	return k.SignContext(ctx, r.SignBytes())
}

// TestRequestSigner: a key with SignGuarded gets each sign the rules
// allow as the parsed Request, from SignBytes, SignConsensus and
// SignRequest alike, and nothing the rules refuse or serve from the state;
// every signature verifies under crypto/ed25519.
func TestRequestSigner(t *testing.T) {
	ctx := context.Background()
	key := &requestKey{Fake: newKey(21)}
	g, err := New(key, Config{FS: &MemFS{}, AutoInit: true})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	pub := key.Public().(ed25519.PublicKey)
	ts := time.Unix(1777636800, 0)

	prevote := msg(t, signbytes.CometBFT, chainID, signbytes.Prevote, 5, 0, 1, ts)
	s, err := g.SignBytes(ctx, prevote)
	if err != nil || !ed25519.Verify(pub, prevote, s.Signature) {
		t.Fatalf("SignBytes: %v (signature verifies: %v)", err, err == nil && ed25519.Verify(pub, prevote, s.Signature))
	}
	if _, err := g.SignBytes(ctx, prevote); err != nil { // the same bytes: from the state
		t.Fatal(err)
	}
	m, err := signbytes.Parse(msg(t, signbytes.CometBFT, chainID, signbytes.Precommit, 5, 0, 1, ts))
	if err != nil {
		t.Fatal(err)
	}
	m.Format = signbytes.CometBFT
	s, err = g.SignConsensus(ctx, m)
	if err != nil || !ed25519.Verify(pub, s.SignBytes, s.Signature) {
		t.Fatalf("SignConsensus: %v", err)
	}
	r, err := g.ParseRequest(msg(t, signbytes.CometBFT, chainID, signbytes.Prevote, 4, 0, 1, ts))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.SignRequest(ctx, &r); err == nil { // a height regression
		t.Fatal("a prevote below the state was signed")
	}
	if len(key.got) != 2 || key.got[0].Phase != signbytes.Prevote || key.got[1].Phase != signbytes.Precommit ||
		key.got[0].Height != 5 || key.got[1].ChainID != chainID {
		t.Fatalf("the key was handed %+v, want the prevote and the precommit at 5", key.got)
	}
}

// TestNewRequestAgreesWithParse: a Request made from fields carries the
// bytes that parse back to them, and one parsed from bytes holds those
// bytes.
func TestNewRequestAgreesWithParse(t *testing.T) {
	g, err := New(newKey(22), Config{FS: &MemFS{}, Formats: signbytes.TM2})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	b := msg(t, signbytes.TM2, chainID, signbytes.Proposal, 9, 2, 7, time.Unix(1777636800, 5))
	p, err := g.ParseRequest(b)
	if err != nil {
		t.Fatal(err)
	}
	n, err := g.NewRequest(p.Message())
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(n.SignBytes(), b) || !bytes.Equal(p.SignBytes(), b) {
		t.Fatalf("NewRequest gave %x, want %x", n.SignBytes(), b)
	}
	if _, err := g.NewRequest(signbytes.Message{Format: signbytes.CometBFT, Phase: signbytes.Prevote, Height: 1, ChainID: chainID}); err == nil {
		t.Fatal("NewRequest took a dialect the Guard does not accept")
	}
}
