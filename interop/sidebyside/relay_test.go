package sidebyside

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"sort"
	"sync"
	"testing"
	"time"

	cmted25519 "github.com/cometbft/cometbft/crypto/ed25519"
	cmtconn "github.com/cometbft/cometbft/p2p/conn"
	privvalproto "github.com/cometbft/cometbft/proto/tendermint/privval"
	cmtproto "github.com/cometbft/cometbft/proto/tendermint/types"

	"github.com/signerkit/signerkit/netshape"
)

// relay sits between the node and the signer: a signer dials one of its
// listeners as it would the node's priv_validator_laddr, and the relay
// dials the node. It ends CometBFT's SecretConnection on both sides (each
// with a new key; a stock node pins none), so it reads the privval
// messages, forwards each unchanged, and times every sign request from
// the moment it has the node's request to the moment it has the signer's
// answer: the node's per-sign latency, less the relay's own microseconds.
type relay struct {
	node string

	mu    sync.Mutex
	signs []sample
	conns map[net.Conn]bool
}

type sample struct {
	at   time.Time // when the answer came
	d    time.Duration
	kind string // signKinds
}

// signKinds are the requests timed: a precommit for a block carries its
// vote extension, which CometBFT v0.38 always has signed with it.
var signKinds = []string{"proposal", "prevote", "precommit"}

func newRelay(t *testing.T, nodeAddr string) *relay {
	r := &relay{node: nodeAddr, conns: map[net.Conn]bool{}}
	t.Cleanup(func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		for c := range r.conns {
			c.Close()
		}
	})
	return r
}

// listen opens a listener for one signer process and returns its address.
// A non-nil link shapes the signer's connection (a signer on another host
// than the node's).
func (r *relay) listen(t *testing.T, link *netshape.Link) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	var l net.Listener = ln
	if link != nil {
		if l, err = netshape.NewListener(ln, *link); err != nil {
			t.Fatal(err)
		}
	}
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go r.pair(c)
		}
	}()
	return ln.Addr().String()
}

func (r *relay) track(c net.Conn, on bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if on {
		r.conns[c] = true
	} else {
		delete(r.conns, c)
	}
}

// pair relays one signer connection to a new connection to the node.
func (r *relay) pair(sc net.Conn) {
	r.track(sc, true)
	defer r.track(sc, false)
	defer sc.Close()
	s, err := cmtconn.MakeSecretConnection(sc, cmted25519.GenPrivKey())
	if err != nil {
		return
	}
	nc, err := net.Dial("tcp", r.node)
	if err != nil {
		return
	}
	r.track(nc, true)
	defer r.track(nc, false)
	defer nc.Close()
	n, err := cmtconn.MakeSecretConnection(nc, cmted25519.GenPrivKey())
	if err != nil {
		return
	}
	type request struct {
		at   time.Time
		kind string // "" for anything but a sign request
	}
	reqs := make(chan request, 8)
	go func() {
		defer sc.Close()
		br := bufio.NewReader(n)
		for {
			frame, body, err := readFrame(br)
			if err != nil {
				return
			}
			reqs <- request{time.Now(), signKind(body)}
			if _, err := s.Write(frame); err != nil {
				return
			}
		}
	}()
	br := bufio.NewReader(s)
	for {
		frame, _, err := readFrame(br)
		if err != nil {
			return
		}
		now := time.Now()
		select {
		case q := <-reqs:
			if q.kind != "" {
				r.mu.Lock()
				r.signs = append(r.signs, sample{now, now.Sub(q.at), q.kind})
				r.mu.Unlock()
			}
		default:
		}
		if _, err := n.Write(frame); err != nil {
			return
		}
	}
}

// readFrame reads one length-delimited message: the whole frame, to
// forward, and its body.
func readFrame(br *bufio.Reader) (frame, body []byte, err error) {
	size, err := binary.ReadUvarint(br)
	if err != nil {
		return nil, nil, err
	}
	if size > 1<<20 {
		return nil, nil, fmt.Errorf("a message of %d bytes", size)
	}
	frame = binary.AppendUvarint(nil, size)
	frame = append(frame, make([]byte, size)...)
	body = frame[len(frame)-int(size):]
	if _, err := io.ReadFull(br, body); err != nil {
		return nil, nil, err
	}
	return frame, body, nil
}

// signKind returns the kind of sign request body is, or "".
func signKind(body []byte) string {
	var m privvalproto.Message
	if err := m.Unmarshal(body); err != nil {
		return ""
	}
	switch req := m.Sum.(type) {
	case *privvalproto.Message_SignProposalRequest:
		return "proposal"
	case *privvalproto.Message_SignVoteRequest:
		if req.SignVoteRequest.Vote.GetType() == cmtproto.PrecommitType {
			return "precommit"
		}
		return "prevote"
	}
	return ""
}

// latencies returns the latencies of the sign requests of kind (any, if
// empty) answered between from and to, sorted.
func (r *relay) latencies(from, to time.Time, kind string) []time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	var ds []time.Duration
	for _, s := range r.signs {
		if !s.at.Before(from) && !s.at.After(to) && (kind == "" || s.kind == kind) {
			ds = append(ds, s.d)
		}
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	return ds
}

// quantile returns the q quantile of sorted durations (nearest rank).
func quantile(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	i := int(q*float64(len(ds))+0.5) - 1
	i = max(0, min(i, len(ds)-1))
	return ds[i]
}

// shapedProxy listens on loopback and forwards each connection to target,
// shaping it with link at the target's end (link's Out is what the target
// sends): the link between two parties' hosts.
func shapedProxy(t *testing.T, target string, link netshape.Link) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	sl, err := netshape.NewListener(ln, link)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var open []net.Conn
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range open {
			c.Close()
		}
	})
	go func() {
		for {
			c, err := sl.Accept()
			if err != nil {
				return
			}
			d, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			mu.Lock()
			open = append(open, c, d)
			mu.Unlock()
			go func() { _, _ = io.Copy(d, c); d.Close() }()
			go func() { _, _ = io.Copy(c, d); c.Close() }()
		}
	}()
	return ln.Addr().String()
}
