package dklsbench

import (
	"crypto/rand"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/signerkit/signerkit/threshold/dkls23"
)

// Keygen runs a 2-of-3 key generation in process and returns the shares
// in party order.
func Keygen() ([]*dkls23.Share, error) {
	_, shares, err := keygenCounted()
	return shares, err
}

// keygenCounted is Keygen, also returning the bytes each party sent.
func keygenCounted() (sent [3]int, shares []*dkls23.Share, err error) {
	kg := make([]*dkls23.Keygen, 3)
	out := map[int]map[int][]byte{}
	for i := range 3 {
		if kg[i], err = dkls23.NewKeygen([]byte("dklsbench key"), i+1, 2, 3, rand.Reader); err != nil {
			return sent, nil, err
		}
		if out[i+1], err = kg[i].Round1(); err != nil {
			return sent, nil, err
		}
	}
	count(&sent, out)
	in := deliver(out)
	for i := range 3 {
		if out[i+1], err = kg[i].Round2(in[i+1]); err != nil {
			return sent, nil, err
		}
	}
	count(&sent, out)
	in = deliver(out)
	for i := range 3 {
		s, err := kg[i].Finish(in[i+1])
		if err != nil {
			return sent, nil, err
		}
		shares = append(shares, s)
	}
	return sent, shares, nil
}

// count adds each party's outgoing bytes to sent.
func count(sent *[3]int, out map[int]map[int][]byte) {
	for from, m := range out {
		for _, b := range m {
			sent[from-1] += len(b)
		}
	}
}

// deliver turns messages by sender and recipient into messages by
// recipient and sender.
func deliver(out map[int]map[int][]byte) map[int]map[int][]byte {
	in := map[int]map[int][]byte{}
	for from, m := range out {
		for to, b := range m {
			if in[to] == nil {
				in[to] = map[int][]byte{}
			}
			in[to][from] = b
		}
	}
	return in
}

// presignSeq numbers presigning runs.
var presignSeq atomic.Uint64

// Presign runs presigning among set in process and returns each party's
// presignature.
func Presign(shares []*dkls23.Share, set []int) (map[int]*dkls23.Presignature, error) {
	_, pre, err := presignCounted(shares, set)
	return pre, err
}

// presignCounted is Presign, also returning the bytes each party sent.
func presignCounted(shares []*dkls23.Share, set []int) (sent [3]int, pre map[int]*dkls23.Presignature, err error) {
	sid := fmt.Appendf(nil, "dklsbench presign %d", presignSeq.Add(1))
	runs := map[int]*dkls23.Presign{}
	out := map[int]map[int][]byte{}
	for _, id := range set {
		if runs[id], out[id], err = dkls23.NewPresign(shares[id-1], sid, set, rand.Reader); err != nil {
			return sent, nil, err
		}
	}
	count(&sent, out)
	in := deliver(out)
	out = map[int]map[int][]byte{}
	for _, id := range set {
		if out[id], err = runs[id].Round2(in[id]); err != nil {
			return sent, nil, err
		}
	}
	count(&sent, out)
	in = deliver(out)
	pre = map[int]*dkls23.Presignature{}
	for _, id := range set {
		if pre[id], err = runs[id].Finish(in[id]); err != nil {
			return sent, nil, err
		}
	}
	return sent, pre, nil
}

// parallel runs f(0) … f(n−1), GOMAXPROCS at a time, and returns the
// first error.
func parallel(n int, f func(i int) error) error {
	var (
		next  atomic.Int64
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
	)
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				if err := f(i); err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
					return
				}
			}
		})
	}
	wg.Wait()
	return first
}
