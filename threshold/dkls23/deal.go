package dkls23

import (
	"crypto/rand"
	"io"
)

// Deal runs a t-of-n key generation with every party in this process, as
// a trusted dealer would: the same protocol as NewKeygen, its messages
// handed over in memory, under a fresh random session id. It returns the
// shares in party order (share i−1 is party i's). Whoever runs it saw
// every share: the key is only as safe as that process and the shares'
// way to their parties. rand nil means crypto/rand.
func Deal(t, n int, rnd io.Reader) ([]*Share, error) {
	if rnd == nil {
		rnd = rand.Reader
	}
	if err := checkParties(1, t, n); err != nil {
		return nil, err
	}
	sid := make([]byte, 32)
	if _, err := io.ReadFull(rnd, sid); err != nil {
		return nil, err
	}
	kg := make([]*Keygen, n)
	out := map[int]map[int][]byte{}
	for i := range n {
		var err error
		if kg[i], err = NewKeygen(append([]byte("dkls23 deal "), sid...), i+1, t, n, rnd); err != nil {
			return nil, err
		}
		if out[i+1], err = kg[i].Round1(); err != nil {
			return nil, err
		}
	}
	in := Deliver(out)
	for i := range n {
		var err error
		if out[i+1], err = kg[i].Round2(in[i+1]); err != nil {
			return nil, err
		}
	}
	in = Deliver(out)
	shares := make([]*Share, n)
	for i := range n {
		var err error
		if shares[i], err = kg[i].Finish(in[i+1]); err != nil {
			return nil, err
		}
	}
	return shares, nil
}

// Deliver turns messages by sender and recipient (out[i][j], i's message
// to j, as each round returns them) into messages by recipient and
// sender (in[j][i], as the next round takes them): the routing of a run
// with every party in one process, as Deal's.
func Deliver(out map[int]map[int][]byte) map[int]map[int][]byte {
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
