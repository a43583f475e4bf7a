package threshold

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/threshold/dkls23"
	"github.com/signerkit/signerkit/threshold/dkls23/dkls23test"
	"github.com/signerkit/signerkit/threshold/frost"
)

type dklsDKGResult struct {
	share *dkls23.Share
	err   error
}

// dklsDKGNet is n participants' listeners and mutual-TLS configurations
// on loopback, with certificates from WriteCerts.
type dklsDKGNet struct {
	remotes []Remote
	ls      []net.Listener
	tls     []*tls.Config
}

func newDKLSDKGNet(t *testing.T, n int) *dklsDKGNet {
	t.Helper()
	dir := t.TempDir()
	if _, _, err := WriteCerts(dir, n, 1, 0); err != nil {
		t.Fatal(err)
	}
	pem, err := os.ReadFile(filepath.Join(dir, "ca.crt"))
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)
	nw := &dklsDKGNet{}
	for id := 1; id <= n; id++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { l.Close() })
		nw.ls = append(nw.ls, l)
		nw.remotes = append(nw.remotes, Remote{ID: fmtID(id), Addr: l.Addr().String(), ServerName: fmt.Sprintf("party-%d", id)})
		nw.tls = append(nw.tls, &tls.Config{Certificates: []tls.Certificate{loadPair(t, dir, fmt.Sprintf("party-%d", id))}, RootCAs: pool})
	}
	return nw
}

// config is participant id's DKGConfig.
func (nw *dklsDKGNet) config(id, tt int, ceremony string) DKGConfig {
	cfg := DKGConfig{ID: fmtID(id), T: tt, N: len(nw.ls), Ceremony: []byte(ceremony), Listener: nw.ls[id-1], TLS: nw.tls[id-1]}
	for _, r := range nw.remotes {
		if r.ID != fmtID(id) {
			cfg.Peers = append(cfg.Peers, r)
		}
	}
	return cfg
}

// runDKLSDKG runs the participants of a t-of-n DKLS23 key generation on
// loopback, participant id with ceremony identifier ceremonies[id]
// (default "test ceremony"); fake, when set, runs participant id instead
// of RunDKLS23DKG.
func runDKLSDKG(t *testing.T, tt, n int, ceremonies map[int]string, fake map[int]func(context.Context, DKGConfig) error) []dklsDKGResult {
	t.Helper()
	nw := newDKLSDKGNet(t, n)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	out := make([]dklsDKGResult, n)
	var wg sync.WaitGroup
	for id := 1; id <= n; id++ {
		ceremony := "test ceremony"
		if ceremonies[id] != "" {
			ceremony = ceremonies[id]
		}
		cfg := nw.config(id, tt, ceremony)
		wg.Add(1)
		go func() {
			defer wg.Done()
			if f := fake[id]; f != nil {
				out[id-1].err = f(ctx, cfg)
				return
			}
			s, err := RunDKLS23DKG(ctx, cfg)
			out[id-1] = dklsDKGResult{s, err}
		}()
	}
	wg.Wait()
	return out
}

// dklsSignInMemory has the signers presign and sign msg with messages
// handed over in memory, and returns the 64-byte r‖s.
func dklsSignInMemory(t *testing.T, shares map[int]*dkls23.Share, signers []int, msg []byte) []byte {
	t.Helper()
	runs := map[int]*dkls23.Presign{}
	out := map[int]map[int][]byte{}
	var err error
	for _, id := range signers {
		if runs[id], out[id], err = dkls23.NewPresign(shares[id], fmt.Appendf(nil, "presign %v", signers), signers, rand.Reader); err != nil {
			t.Fatal(err)
		}
	}
	in := dkls23test.Deliver(out)
	out = map[int]map[int][]byte{}
	for _, id := range signers {
		if out[id], err = runs[id].Round2(in[id]); err != nil {
			t.Fatal(err)
		}
	}
	in = dkls23test.Deliver(out)
	h := sha256.Sum256(msg)
	var parts []*dkls23.SignShare
	for _, id := range signers {
		pre, err := runs[id].Finish(in[id])
		if err != nil {
			t.Fatal(err)
		}
		part, err := pre.Sign(h[:])
		if err != nil {
			t.Fatal(err)
		}
		parts = append(parts, part)
	}
	sig, err := dkls23.Combine(shares[signers[0]].PublicKey(), h[:], parts)
	if err != nil {
		t.Fatal(err)
	}
	r, s := sig.R(), sig.S()
	b := r.Bytes()
	sb := s.Bytes()
	return append(b[:], sb[:]...)
}

// subsets returns the subsets of 1 … n of size k, in order.
func subsets(n, k int) [][]int {
	if k == 0 {
		return [][]int{nil}
	}
	var out [][]int
	for last := k; last <= n; last++ {
		for _, s := range subsets(last-1, k-1) {
			out = append(out, append(s, last))
		}
	}
	return out
}

// TestDKLS23NetworkDKG: the participants of a networked DKLS23 key
// generation agree on the group key; their shares survive the share file,
// and every signing set of t of them signs for the key (decred and
// refsecp256k1 verify). The 2-of-3 key also signs through a DKLS23Signer
// and two DKLS23Party servers over loopback TLS.
func TestDKLS23NetworkDKG(t *testing.T) {
	for _, tn := range [][2]int{{2, 3}, {2, 2}, {3, 3}} {
		res := runDKLSDKG(t, tn[0], tn[1], nil, nil)
		shares := map[int]*dkls23.Share{}
		for i, r := range res {
			if r.err != nil {
				t.Fatalf("%d-of-%d participant %d: %v", tn[0], tn[1], i+1, r.err)
			}
			if r.share.ID != i+1 || r.share.T != tn[0] || r.share.N != tn[1] {
				t.Fatalf("participant %d: the share of %d, %d of %d", i+1, r.share.ID, r.share.T, r.share.N)
			}
			if !bytes.Equal(r.share.PublicKey(), res[0].share.PublicKey()) {
				t.Fatalf("%d-of-%d: participant %d derived another group key", tn[0], tn[1], i+1)
			}
			file, err := MarshalDKLS23Share(r.share)
			if err != nil {
				t.Fatal(err)
			}
			if shares[i+1], err = ParseDKLS23Share(file); err != nil {
				t.Fatal(err)
			}
		}
		pub := res[0].share.PublicKey()
		for _, set := range subsets(tn[1], tn[0]) {
			msg := fmt.Appendf(nil, "%d-of-%d key from a network DKG, signed by %v", tn[0], tn[1], set)
			checkSecp256k1(t, pub, msg, dklsSignInMemory(t, shares, set, msg))
		}
		if tn == [2]int{2, 3} {
			dklsSignOverTLS(t, []*dkls23.Share{shares[1], shares[2], shares[3]})
		}
	}
}

// dklsSignOverTLS signs with share 1 in a DKLS23Signer and shares 2 and 3
// in DKLS23Party servers on loopback.
func dklsSignOverTLS(t *testing.T, shares []*dkls23.Share) {
	t.Helper()
	f := dklsSetup(t)
	f.shares = shares
	f.hedge = -1
	f.start(t, 2)
	f.start(t, 3)
	for _, ids := range [][]int{{2}, {3}} {
		s := f.signer(t, -1, ids...)
		msg := fmt.Appendf(nil, "gno sign bytes with parties 1 and %d", ids[0])
		sig, err := s.SignContext(context.Background(), msg)
		if err != nil {
			t.Fatal(err)
		}
		checkSecp256k1(t, shares[0].PublicKey(), msg, sig)
		if err := signer.ECDSASecp256k1.Verify(s.Public(), msg, sig); err != nil {
			t.Fatal(err)
		}
	}
}

// TestDKLS23NetworkDKGBindsCeremony: a participant of another ceremony
// is named by the others' checks, and fails itself.
func TestDKLS23NetworkDKGBindsCeremony(t *testing.T) {
	res := runDKLSDKG(t, 2, 3, map[int]string{3: "another ceremony"}, nil)
	for i, r := range res {
		t.Logf("participant %d: %v", i+1, r.err)
		var ae *dkls23.AbortError
		if !errors.As(r.err, &ae) {
			t.Fatalf("participant %d: %v, want a *dkls23.AbortError", i+1, r.err)
		}
		if i < 2 && ae.Party != 3 {
			t.Errorf("participant %d blames %d, want 3: %v", i+1, ae.Party, r.err)
		}
		if i == 2 && ae.Party == 3 {
			t.Errorf("participant 3 blames itself: %v", r.err)
		}
	}
}

// TestDKLS23NetworkDKGGarbledPeer: participant 3 connects as itself but
// sends a garbled round-1 message, or a frame of the wrong type; the
// others abort naming it, and nobody gets a share.
func TestDKLS23NetworkDKGGarbledPeer(t *testing.T) {
	for _, c := range []struct {
		typ  byte
		body []byte
	}{
		{typeDKLSKeygen1, []byte("not a keygen message")},
		{typeDKLSKeygen2, nil},
		{typeDKGRound1, nil},
	} {
		fake := func(ctx context.Context, cfg DKGConfig) error {
			peers, closePeers, err := openDKGPeers(ctx, cfg)
			defer closePeers()
			if err != nil {
				return err
			}
			for _, p := range sortedPeers(peers) {
				if err := p.w.write(frame{typ: c.typ, body: c.body}); err != nil {
					return err
				}
			}
			for _, p := range sortedPeers(peers) { // until they hang up
				for err == nil {
					_, err = readFrame(p.r)
				}
				err = nil
			}
			return nil
		}
		res := runDKLSDKG(t, 2, 3, nil, map[int]func(context.Context, DKGConfig) error{3: fake})
		for i, r := range res[:2] {
			t.Logf("frame type %d: participant %d: %v", c.typ, i+1, r.err)
			var ae *dkls23.AbortError
			if !errors.As(r.err, &ae) || ae.Party != 3 || r.share != nil {
				t.Errorf("frame type %d: participant %d: %v, want a *dkls23.AbortError naming 3", c.typ, i+1, r.err)
			}
		}
	}
}

// TestDKLS23NetworkDKGConfig: a config that does not describe the
// participants 1 … N is refused before anything is dialed.
func TestDKLS23NetworkDKGConfig(t *testing.T) {
	nw := newDKLSDKGNet(t, 3)
	for name, edit := range map[string]func(*DKGConfig){
		"no ceremony":       func(c *DKGConfig) { c.Ceremony = nil },
		"long ceremony":     func(c *DKGConfig) { c.Ceremony = make([]byte, frost.MaxCeremonyID+1) },
		"ID out of range":   func(c *DKGConfig) { c.ID = 4 },
		"peer out of range": func(c *DKGConfig) { c.Peers[1].ID = 9 },
		"repeated peer":     func(c *DKGConfig) { c.Peers[1].ID = c.Peers[0].ID },
		"threshold 1":       func(c *DKGConfig) { c.T = 1 },
		"no TLS":            func(c *DKGConfig) { c.TLS = nil },
	} {
		cfg := nw.config(1, 2, "config test")
		cfg.Peers = append([]Remote(nil), cfg.Peers...)
		edit(&cfg)
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		s, err := RunDKLS23DKG(ctx, cfg)
		cancel()
		var ue *dkls23.UsageError
		if s != nil || !(errors.Is(err, signer.ErrInvalidArgument) || errors.As(err, &ue)) {
			t.Errorf("%s: %v, want signer.ErrInvalidArgument or a *dkls23.UsageError", name, err)
		}
	}
}

// TestDKLS23NetworkDKGBadShare: participant 3 runs the key generation
// honestly but sends participant 1 a Shamir share off by one bit, which
// 1's check against 3's commitments catches, naming 3. Participant 2,
// which got consistent messages, finishes: a key generation is only
// done when every participant has (docs/threshold.md).
func TestDKLS23NetworkDKGBadShare(t *testing.T) {
	fake := func(ctx context.Context, cfg DKGConfig) error {
		k, err := dkls23.NewKeygen(dklsDKGSession(cfg), int(cfg.ID), cfg.T, cfg.N, rand.Reader)
		if err != nil {
			return err
		}
		out, err := k.Round1()
		if err != nil {
			return err
		}
		peers, closePeers, err := openDKGPeers(ctx, cfg)
		defer closePeers()
		if err != nil {
			return err
		}
		in, err := dklsDKGExchange(peers, typeDKLSKeygen1, out)
		if err != nil {
			return err
		}
		if out, err = k.Round2(in); err != nil {
			return err
		}
		// The share is the scalar before the 128 base-OT points (33 bytes each).
		out[1][len(out[1])-128*33-1] ^= 1
		if in, err = dklsDKGExchange(peers, typeDKLSKeygen2, out); err != nil {
			return err
		}
		_, err = k.Finish(in)
		return err
	}
	res := runDKLSDKG(t, 2, 3, nil, map[int]func(context.Context, DKGConfig) error{3: fake})
	var ae *dkls23.AbortError
	if !errors.As(res[0].err, &ae) || ae.Party != 3 || !strings.Contains(ae.Reason, "inconsistent") || res[0].share != nil {
		t.Errorf("participant 1: %v, want a *dkls23.AbortError naming 3", res[0].err)
	}
	t.Logf("participant 1: %v", res[0].err)
	if res[1].err != nil || res[2].err != nil {
		t.Errorf("participants 2 and 3, whose messages were consistent: %v, %v", res[1].err, res[2].err)
	}
}
