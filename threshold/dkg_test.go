package threshold_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/signerkit/signerkit/threshold"
	"github.com/signerkit/signerkit/threshold/frost"
	"github.com/signerkit/signerkit/threshold/thresholdtest"
)

type dkgResult struct {
	key *frost.KeyPackage
	pub *frost.PublicKeyPackage
	err error
}

// runNetworkDKG runs n participants of a network DKG on loopback; names
// gives each participant's certificate name (default party-<id>).
func runNetworkDKG(t *testing.T, tt, n int, names map[frost.Identifier]string, timeout time.Duration) []dkgResult {
	return runNetworkDKGCeremonies(t, tt, n, names, nil, timeout)
}

// runNetworkDKGCeremonies is runNetworkDKG with participant id's ceremony
// identifier ceremonies[id] (default "test ceremony").
func runNetworkDKGCeremonies(t *testing.T, tt, n int, names map[frost.Identifier]string, ceremonies map[frost.Identifier]string, timeout time.Duration) []dkgResult {
	t.Helper()
	ca, err := thresholdtest.NewCA()
	if err != nil {
		t.Fatal(err)
	}
	ls := make([]net.Listener, n)
	var remotes []threshold.Remote
	for i := range n {
		if ls[i], err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
			t.Fatal(err)
		}
		id := frost.Identifier(i + 1)
		remotes = append(remotes, threshold.Remote{ID: id, Addr: ls[i].Addr().String(), ServerName: fmt.Sprintf("party-%d", id)})
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	out := make([]dkgResult, n)
	var wg sync.WaitGroup
	for i := range n {
		id := frost.Identifier(i + 1)
		name := remotes[i].ServerName
		if names[id] != "" {
			name = names[id]
		}
		cert, err := ca.PeerCert(name)
		if err != nil {
			t.Fatal(err)
		}
		var peers []threshold.Remote
		for _, r := range remotes {
			if r.ID != id {
				peers = append(peers, r)
			}
		}
		ceremony := "test ceremony"
		if ceremonies[id] != "" {
			ceremony = ceremonies[id]
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			k, p, err := threshold.RunDKG(ctx, threshold.DKGConfig{ID: id, T: tt, N: n, Ceremony: []byte(ceremony), Peers: peers, Listener: ls[i],
				TLS: &tls.Config{Certificates: []tls.Certificate{cert}, RootCAs: ca.Pool()}})
			out[i] = dkgResult{k, p, err}
		}()
	}
	wg.Wait()
	return out
}

func TestNetworkDKG(t *testing.T) {
	for _, tn := range [][2]int{{2, 3}, {3, 4}} {
		res := runNetworkDKG(t, tn[0], tn[1], nil, 20*time.Second)
		var pubEnc []byte
		var keys []*frost.KeyPackage
		for i, r := range res {
			if r.err != nil {
				t.Fatalf("%d-of-%d participant %d: %v", tn[0], tn[1], i+1, r.err)
			}
			b, _ := r.pub.MarshalBinary()
			if pubEnc == nil {
				pubEnc = b
			} else if !bytes.Equal(b, pubEnc) {
				t.Fatalf("participant %d derived another public key package", i+1)
			}
			keys = append(keys, r.key)
		}
		// Any t participants sign for the group key.
		pub := res[0].pub
		msg := []byte("signed with a key from a network DKG")
		var list []frost.SigningCommitments
		var nonces []*frost.SigningNonces
		for _, k := range keys[len(keys)-tn[0]:] {
			n, _ := frost.Commit(k, rand.Reader)
			nonces = append(nonces, n)
			list = append(list, n.Commitments())
		}
		var shares []frost.SignatureShare
		for i, k := range keys[len(keys)-tn[0]:] {
			sh, err := frost.Sign(k, nonces[i], msg, list)
			if err != nil {
				t.Fatal(err)
			}
			shares = append(shares, sh)
		}
		sig, err := frost.Aggregate(pub, msg, list, shares)
		if err != nil {
			t.Fatal(err)
		}
		if !ed25519.Verify(pub.GroupPublicKey(), msg, sig) {
			t.Fatal("signature does not verify with crypto/ed25519")
		}
	}
}

// TestNetworkDKGRefusesImpostor: a participant whose certificate is not
// its own name is not admitted, and the key generation fails.
func TestNetworkDKGRefusesImpostor(t *testing.T) {
	t.Parallel() // the others wait out the timeout for the refused participant
	res := runNetworkDKG(t, 2, 3, map[frost.Identifier]string{3: "party-2"}, 2*time.Second)
	for i, r := range res {
		if r.err == nil {
			t.Errorf("participant %d finished a key generation with an impostor", i+1)
		}
	}
}

// TestNetworkDKGBindsCeremony: a participant whose round-1 package was
// made for another ceremony is named by the others' proof checks.
func TestNetworkDKGBindsCeremony(t *testing.T) {
	res := runNetworkDKGCeremonies(t, 2, 3, nil, map[frost.Identifier]string{3: "another ceremony"}, 20*time.Second)
	for i, r := range res[:2] {
		var de *frost.DKGError
		if !errors.As(r.err, &de) || de.Culprit != 3 || de.Round != 1 {
			t.Errorf("participant %d: %v, want a round-1 *frost.DKGError naming 3", i+1, r.err)
		}
	}
	if res[2].err == nil {
		t.Error("participant 3 finished a key generation of another ceremony")
	}
}
