package threshold

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/signerkit/signerkit/threshold/dkls23"
	"github.com/signerkit/signerkit/threshold/frost"
)

// onePresignature starts parties 2 and 3 and a signer with party 2
// alone, makes one presignature, and returns it and the sign connection.
func onePresignature(t *testing.T) (*dklsFixture, *DKLS23Signer, dklsPre, *clientConn) {
	f := newDKLSFixture(t)
	s := f.signer(t, -1, 2)
	ctx := context.Background()
	if _, err := s.Presign(ctx, 2, 1); err != nil {
		t.Fatal(err)
	}
	m := s.members[0]
	cc, err := m.r.conn(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	return f, s, m.pool[0], cc
}

// TestDKLS23PresignatureSignsOnce: concurrent sign requests for one
// presignature, each for another hash, get one share between them; the
// others, and the winning request replayed, are refused as an unknown
// presignature. The share that was given signs its hash.
func TestDKLS23PresignatureSignsOnce(t *testing.T) {
	f, _, pre, cc := onePresignature(t)
	ctx := context.Background()
	const n = 16
	var wg sync.WaitGroup
	answers := make([]frame, n)
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			h := sha256.Sum256([]byte{byte(i)})
			answers[i], errs[i] = cc.roundTrip(ctx, typeDKLSSign, append(pre.id[:], h[:]...))
		}()
	}
	wg.Wait()
	won := -1
	for i, a := range answers {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		err := dklsAnswer(2, a, typeDKLSShare)
		switch {
		case err == nil && won >= 0:
			t.Fatalf("requests %d and %d both got a share of one presignature", won, i)
		case err == nil:
			won = i
		case !errors.Is(err, frost.ErrNonceUsed):
			t.Fatalf("request %d: %v, want a refusal wrapping frost.ErrNonceUsed", i, err)
		}
	}
	if won < 0 {
		t.Fatal("no request got a share")
	}
	h := sha256.Sum256([]byte{byte(won)})
	again, err := cc.roundTrip(ctx, typeDKLSSign, append(pre.id[:], h[:]...))
	if err != nil || !errors.Is(dklsAnswer(2, again, typeDKLSShare), frost.ErrNonceUsed) {
		t.Fatalf("the winning request replayed: %v %v, want it refused", again.typ, err)
	}
	theirs, err := dkls23.UnmarshalSignShare(answers[won].body)
	if err != nil {
		t.Fatal(err)
	}
	ours, err := pre.ps.Sign(h[:])
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dkls23.Combine(f.shares[0].PublicKey(), h[:], []*dkls23.SignShare{ours, theirs}); err != nil {
		t.Fatal(err)
	}
	if _, err := pre.ps.Sign(h[:]); err == nil {
		t.Fatal("the coordinator's half signed twice")
	}
	if f.parties[2].Presignatures() != 0 || f.parties[2].Signed() != 1 || f.parties[2].Refused() != n {
		t.Fatalf("party 2 holds %d presignatures, signed %d, refused %d", f.parties[2].Presignatures(), f.parties[2].Signed(), f.parties[2].Refused())
	}
}

// TestDKLS23ConcurrentSigns: signs at once, more than the pools hold,
// each verified, hedged or not; no presignature id is sent twice (the
// parties refuse none).
func TestDKLS23ConcurrentSigns(t *testing.T) {
	f := newDKLSFixture(t)
	f.timeout = time.Minute // most signs presign first, all at once: slow under -race
	s := f.signer(t, 3)
	waitPooled(t, s, 2, 3)
	const n = 24
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			msg := fmt.Appendf(nil, "concurrent %d", i)
			sig, err := s.SignContext(context.Background(), msg)
			if err != nil {
				t.Error(err)
				return
			}
			checkSecp256k1(t, f.shares[0].PublicKey(), msg, sig)
		}()
	}
	wg.Wait()
	p2, p3 := f.parties[2], f.parties[3]
	// A hedge, which these signs under load may take, asks a second party.
	if n2 := p2.Signed() + p3.Signed(); n2 < n || n2 > 2*n || p2.Refused()+p3.Refused() != 0 {
		t.Fatalf("parties signed %d+%d and refused %d+%d for %d signatures", p2.Signed(), p3.Signed(), p2.Refused(), p3.Refused(), n)
	}
}

// TestDKLS23LostPresignatures: a party that dropped presignatures (for
// room, or in a restart) costs a retry, not a failed sign.
func TestDKLS23LostPresignatures(t *testing.T) {
	f := dklsSetup(t)
	f.max = 2
	f.start(t, 2)
	s := f.signer(t, -1, 2)
	if _, err := s.Presign(context.Background(), 2, 3); err != nil {
		t.Fatal(err)
	}
	if got := f.parties[2].Presignatures(); got != 2 {
		t.Fatalf("the party holds %d presignatures, want its maximum 2", got)
	}
	msg := []byte("the oldest presignature was dropped")
	sig, err := s.SignContext(context.Background(), msg)
	if err != nil {
		t.Fatal(err)
	}
	checkSecp256k1(t, f.shares[0].PublicKey(), msg, sig)
	if f.parties[2].Refused() != 1 {
		t.Fatalf("party 2 refused %d requests, want 1 (the dropped presignature)", f.parties[2].Refused())
	}
	if _, err := s.Presign(context.Background(), 2, 2); err != nil {
		t.Fatal(err)
	}
	f.parties[2].Close() // a restart, on the same address: the pool is lost
	f.start(t, 2)
	msg = []byte("after a restart")
	if sig, err = s.SignContext(context.Background(), msg); err != nil {
		t.Fatal(err)
	}
	checkSecp256k1(t, f.shares[0].PublicKey(), msg, sig)
}

// TestDKLS23MaliciousParty: party 2's answers are tampered with in
// several ways; each sign with party 2 alone fails with a
// *DKLS23PartyError naming it, and with party 3 beside it the sign
// succeeds.
func TestDKLS23MaliciousParty(t *testing.T) {
	flip := func(typ byte, at int) func(req, resp frame) frame {
		return func(_, resp frame) frame {
			if resp.typ == typ && len(resp.body) > at {
				resp.body = bytes.Clone(resp.body)
				resp.body[at] ^= 1
			}
			return resp
		}
	}
	var mu sync.Mutex
	var first []byte
	cases := map[string]func(req, resp frame) frame{
		"share flipped":        flip(typeDKLSShare, 100),
		"share header flipped": flip(typeDKLSShare, 2),
		"ot message flipped":   flip(typeDKLSPresigned, 4+100),
		"round 2 flipped":      flip(typeDKLSPresigned, 20000),
		"presigned truncated": func(_, resp frame) frame {
			if resp.typ == typeDKLSPresigned {
				resp.body = resp.body[:10]
			}
			return resp
		},
		"wrong answer type": func(_, resp frame) frame {
			if resp.typ == typeDKLSShare {
				resp.typ = typeDKLSFinished
			}
			return resp
		},
		"old share replayed": func(_, resp frame) frame {
			mu.Lock()
			defer mu.Unlock()
			if resp.typ == typeDKLSShare {
				if first == nil {
					first = resp.body
				} else {
					resp.body = first
				}
			}
			return resp
		},
	}
	for name, fn := range cases {
		t.Run(name, func(t *testing.T) {
			f := dklsSetup(t)
			f.tamper[2] = fn
			f.start(t, 2)
			f.start(t, 3)
			alone := f.signer(t, -1, 2)
			var pe *DKLS23PartyError
			for i := range 2 { // the replay needs a first sign
				_, err := alone.SignContext(context.Background(), fmt.Appendf(nil, "tampered %d", i))
				if err == nil {
					continue
				}
				if !errors.As(err, &pe) || pe.Party != 2 {
					t.Fatalf("%v: want a *DKLS23PartyError naming party 2", err)
				}
				break
			}
			if pe == nil {
				t.Fatal("every sign with the tampering party succeeded")
			}
			both := f.signer(t, -1, 2, 3)
			msg := []byte("routed around the tampering party")
			sig, err := both.SignContext(context.Background(), msg)
			if err != nil {
				t.Fatal(err)
			}
			checkSecp256k1(t, f.shares[0].PublicKey(), msg, sig)
		})
	}
}

// TestDKLS23Deadline: parties that accept connections and never answer
// hold a sign no longer than its deadline, or PartyTimeout each.
func TestDKLS23Deadline(t *testing.T) {
	f := dklsSetup(t)
	for _, id := range []int{2, 3} {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { l.Close() })
		go func() {
			for {
				c, err := l.Accept()
				if err != nil {
					return
				}
				t.Cleanup(func() { c.Close() })
			}
		}()
		f.addrs[id] = l.Addr().String()
	}
	s := f.signer(t, -1)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := s.SignContext(ctx, []byte("hung"))
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("%v: want an error wrapping context.DeadlineExceeded", err)
	}
	if d := time.Since(start); d > 1500*time.Millisecond { // a hang guard, wide for a loaded machine
		t.Fatalf("returned after %v, far past the 300 ms deadline", d)
	}
	s.timeout = 100 * time.Millisecond
	start = time.Now()
	_, err = s.SignContext(context.Background(), []byte("hung"))
	var ne *NoSignerError
	if !errors.As(err, &ne) || len(ne.Errs) != 2 {
		t.Fatalf("%v: want a *NoSignerError naming both parties", err)
	}
	if d := time.Since(start); d > 1500*time.Millisecond { // a hang guard, wide for a loaded machine
		t.Fatalf("two parties timing out at 100 ms took %v", d)
	}
}

// TestDKLS23PresignIDReused: a presign request that reuses an id the
// party holds, made or in the making, is refused, and the presignature
// under that id still signs once.
func TestDKLS23PresignIDReused(t *testing.T) {
	f, s, pre, cc := onePresignature(t)
	ctx := context.Background()
	_, out, err := dkls23.NewPresign(f.shares[0], dklsSID(pre.id), []int{1, 2}, rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	a, err := cc.roundTrip(ctx, typeDKLSPresign, append(append(pre.id[:], 1), out[2]...))
	if err != nil {
		t.Fatal(err)
	}
	var pe *PartyError
	if err := dklsAnswer(2, a, typeDKLSPresigned); !errors.As(err, &pe) || pe.Code != codeInvalid {
		t.Fatalf("a presign reusing a held id: %v, want refused as invalid", err)
	}
	msg := []byte("the presignature under the reused id")
	sig, err := s.SignContext(ctx, msg)
	if err != nil {
		t.Fatal(err)
	}
	checkSecp256k1(t, f.shares[0].PublicKey(), msg, sig)
	if f.parties[2].Signed() != 1 || f.parties[2].Refused() != 0 {
		t.Fatalf("party 2 signed %d, refused %d sign requests", f.parties[2].Signed(), f.parties[2].Refused())
	}
}
