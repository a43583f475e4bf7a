package cggmp21

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/taurusgroup/multi-party-sig/pkg/ecdsa"
	"github.com/taurusgroup/multi-party-sig/pkg/math/curve"
	"github.com/taurusgroup/multi-party-sig/pkg/party"
	"github.com/taurusgroup/multi-party-sig/pkg/protocol"
	"github.com/taurusgroup/multi-party-sig/protocols/cmp"
)

// Threshold is the library's threshold of a 2-of-3 key: it counts the
// parties a signature can do without, so any Threshold+1 = 2 sign.
const Threshold = 1

// Keys are the three parties' outputs of one key generation, participant
// i+1's at index i.
type Keys [3]*cmp.Config

// Presignature is one presignature of two signers, signer i+1's part at
// index i (the third is nil).
type Presignature [3]*ecdsa.PreSignature

// runAll runs a session at each of the participants at once and returns
// their results, participant i's at index i.
func (m *Mesh) runAll(ctx context.Context, participants []int, start func(i int) protocol.StartFunc) ([3]any, error) {
	s := m.newSession()
	var (
		out  [3]any
		errs [3]error
		wg   sync.WaitGroup
	)
	for _, i := range participants {
		wg.Go(func() { out[i], errs[i] = m.nodes[i].run(ctx, s, participants, start(i)) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			return out, fmt.Errorf("cggmp21: participant %d: %w", i+1, err)
		}
	}
	return out, nil
}

// Keygen runs the library's CGGMP21 key generation (with its auxiliary
// Paillier and Pedersen parameters) among the three parties, for a 2-of-3
// secp256k1 key.
func (m *Mesh) Keygen(ctx context.Context) (Keys, error) {
	var keys Keys
	out, err := m.runAll(ctx, []int{0, 1, 2}, func(i int) protocol.StartFunc {
		return cmp.Keygen(curve.Secp256k1{}, IDs[i], IDs, Threshold, nil)
	})
	if err != nil {
		return keys, err
	}
	for i, r := range out {
		c, ok := r.(*cmp.Config)
		if !ok {
			return keys, fmt.Errorf("cggmp21: participant %d's key generation gave a %T", i+1, r)
		}
		keys[i] = c
	}
	if !keys[0].PublicPoint().Equal(keys[1].PublicPoint()) || !keys[0].PublicPoint().Equal(keys[2].PublicPoint()) {
		return keys, errors.New("cggmp21: the parties' group keys differ")
	}
	return keys, nil
}

// Presign runs the library's presigning between signers a and b (1 … 3).
func (m *Mesh) Presign(ctx context.Context, keys Keys, a, b int) (Presignature, error) {
	var p Presignature
	signers := party.IDSlice{IDs[a-1], IDs[b-1]}
	out, err := m.runAll(ctx, []int{a - 1, b - 1}, func(i int) protocol.StartFunc {
		return cmp.Presign(keys[i], signers, nil)
	})
	if err != nil {
		return p, err
	}
	for _, i := range []int{a - 1, b - 1} {
		ps, ok := out[i].(*ecdsa.PreSignature)
		if !ok {
			return p, fmt.Errorf("cggmp21: participant %d's presigning gave a %T", i+1, out[i])
		}
		if err := ps.Validate(); err != nil {
			return p, fmt.Errorf("cggmp21: participant %d's presignature: %w", i+1, err)
		}
		p[i] = ps
	}
	return p, nil
}

// SignTimeout bounds the second signer's side of an online sign.
const SignTimeout = 30 * time.Second

// Signer signs online with presignatures made beforehand: signer a (the
// one asked) sends signer b a request naming the presignature and the
// hash, and both run the library's one-round PresignOnline; Sign returns
// when a has the signature. So a sign takes a round trip between the two
// signers, as a coordinator beside signer a would see it.
//
// The presignatures are used in turn, again and again. Reusing a
// presignature for two messages reveals the key: the Signer is for
// benchmarks of throwaway keys only, where it does the work of a fresh
// presignature per sign without paying for one.
type Signer struct {
	m       *Mesh
	keys    Keys
	a, b    int // indexes
	presigs []Presignature
	next    atomic.Uint32
	pub     curve.Point // the group key, which the library recomputes at each call
}

// NewSigner returns the Signer of signers a and b (1 … 3) with presigs,
// made by Presign(keys, a, b). Only one Signer of a Mesh serves requests:
// the last made.
func (m *Mesh) NewSigner(keys Keys, a, b int, presigs []Presignature) (*Signer, error) {
	if len(presigs) == 0 {
		return nil, errors.New("cggmp21: a Signer needs a presignature")
	}
	s := &Signer{m: m, keys: keys, a: a - 1, b: b - 1, presigs: presigs, pub: keys[0].PublicPoint()}
	n := m.nodes[s.b]
	n.mu.Lock()
	n.onRequest = s.serve
	n.mu.Unlock()
	return s, nil
}

// Public returns the group key.
func (s *Signer) Public() curve.Point { return s.pub }

// Sign signs a 32-byte hash (a message's SHA-256, as Cosmos and gno sign).
func (s *Signer) Sign(ctx context.Context, hash [32]byte) (*ecdsa.Signature, error) {
	k := (s.next.Add(1) - 1) % uint32(len(s.presigs))
	session := s.m.newSession()
	a := s.m.nodes[s.a]
	a.send(s.b, frame{session: session, kind: kindRequest, body: request{presig: k, hash: hash}.encode()})
	r, err := a.run(ctx, session, []int{s.a, s.b}, cmp.PresignOnline(s.keys[s.a], s.presigs[k][s.a], hash[:], nil))
	if err != nil {
		return nil, err
	}
	sig, ok := r.(*ecdsa.Signature)
	if !ok {
		return nil, fmt.Errorf("cggmp21: online signing gave a %T", r)
	}
	return sig, nil
}

// serve runs signer b's side of a sign signer a asked for.
func (s *Signer) serve(n *node, from int, session uint64, body []byte) {
	q, err := decodeRequest(body)
	if err == nil && (from != s.a || q.presig >= uint32(len(s.presigs))) {
		err = fmt.Errorf("%w: participant %d asked for presignature %d of %d", ErrFrame, from+1, q.presig, len(s.presigs))
	}
	if err != nil {
		n.fail(err)
		return
	}
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), SignTimeout)
		defer cancel()
		if _, err := n.run(ctx, session, []int{s.a, s.b}, cmp.PresignOnline(s.keys[s.b], s.presigs[q.presig][s.b], q.hash[:], nil)); err != nil && !errors.Is(err, ErrClosed) {
			n.fail(err)
		}
	}()
}
