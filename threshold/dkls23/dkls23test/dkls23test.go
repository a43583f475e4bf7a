// Package dkls23test runs package dkls23's protocols with every party in
// one process, messages handed over in memory: key generation and
// presigning for tests and benchmarks. Each returns the bytes each party
// sent too.
package dkls23test

import (
	"crypto/rand"
	"fmt"
	"sync/atomic"

	"github.com/signerkit/signerkit/threshold/dkls23"
)

// Keygen runs a t-of-n key generation in process and returns the shares
// in party order and the bytes each party sent.
func Keygen(t, n int) (sent []int, shares []*dkls23.Share, err error) {
	sent = make([]int, n)
	kg := make([]*dkls23.Keygen, n)
	out := map[int]map[int][]byte{}
	for i := range n {
		if kg[i], err = dkls23.NewKeygen([]byte("dkls23test key"), i+1, t, n, rand.Reader); err != nil {
			return sent, nil, err
		}
		if out[i+1], err = kg[i].Round1(); err != nil {
			return sent, nil, err
		}
	}
	count(sent, out)
	in := Deliver(out)
	for i := range n {
		if out[i+1], err = kg[i].Round2(in[i+1]); err != nil {
			return sent, nil, err
		}
	}
	count(sent, out)
	in = Deliver(out)
	for i := range n {
		s, err := kg[i].Finish(in[i+1])
		if err != nil {
			return sent, nil, err
		}
		shares = append(shares, s)
	}
	return sent, shares, nil
}

// count adds each party's outgoing bytes to sent.
func count(sent []int, out map[int]map[int][]byte) {
	for from, m := range out {
		for _, b := range m {
			sent[from-1] += len(b)
		}
	}
}

// Deliver turns messages by sender and recipient into messages by
// recipient and sender (dkls23.Deliver).
func Deliver(out map[int]map[int][]byte) map[int]map[int][]byte { return dkls23.Deliver(out) }

// presignSeq numbers presigning runs.
var presignSeq atomic.Uint64

// Presign runs presigning among set in process and returns each party's
// presignature and the bytes each party sent (by index, party i at i−1).
func Presign(shares []*dkls23.Share, set []int) (sent []int, pre map[int]*dkls23.Presignature, err error) {
	sent = make([]int, len(shares))
	sid := fmt.Appendf(nil, "dkls23test presign %d", presignSeq.Add(1))
	runs := map[int]*dkls23.Presign{}
	out := map[int]map[int][]byte{}
	for _, id := range set {
		if runs[id], out[id], err = dkls23.NewPresign(shares[id-1], sid, set, rand.Reader); err != nil {
			return sent, nil, err
		}
	}
	count(sent, out)
	in := Deliver(out)
	out = map[int]map[int][]byte{}
	for _, id := range set {
		if out[id], err = runs[id].Round2(in[id]); err != nil {
			return sent, nil, err
		}
	}
	count(sent, out)
	in = Deliver(out)
	pre = map[int]*dkls23.Presignature{}
	for _, id := range set {
		if pre[id], err = runs[id].Finish(in[id]); err != nil {
			return sent, nil, err
		}
	}
	return sent, pre, nil
}
