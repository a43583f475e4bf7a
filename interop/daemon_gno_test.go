package interop

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	gnoprivval "github.com/gnolang/gno/tm2/pkg/bft/privval"
	"github.com/gnolang/gno/tm2/pkg/bft/privval/signer/remote/client"
	"github.com/gnolang/gno/tm2/pkg/bft/privval/upstream"
	gnotypes "github.com/gnolang/gno/tm2/pkg/bft/types"
	gnoed25519 "github.com/gnolang/gno/tm2/pkg/crypto/ed25519"

	spv "github.com/signerkit/signerkit/privval"
)

// skHeights is how many heights each daemon test signs.
const skHeights = 5

// gnoSignHeights signs a proposal, a prevote and a precommit at heights
// from..to through pv (gno's PrivValidator or tmkms SignerClient), each
// checked by gno's own verification and by crypto/ed25519.
func gnoSignHeights(t *testing.T, pv gnotypes.PrivValidator, pub ed25519.PublicKey, from, to int64) {
	t.Helper()
	pk := pv.PubKey()
	if !gnoed25519.PubKeyEd25519(pub).Equals(pk) {
		t.Fatalf("public key %v, want %X", pk, pub)
	}
	ts := time.Now().UTC().Truncate(time.Millisecond)
	for h := from; h <= to; h++ {
		prop := &gnotypes.Proposal{Type: gnotypes.ProposalType, Height: h, POLRound: -1, BlockID: gnoBlockID(byte(h), 0, 1), Timestamp: ts}
		if err := pv.SignProposal(skChain, prop); err != nil {
			t.Fatalf("height %d proposal: %v", h, err)
		}
		if !pk.VerifyBytes(prop.SignBytes(skChain), prop.Signature) || !ed25519.Verify(pub, prop.SignBytes(skChain), prop.Signature) {
			t.Fatalf("height %d: proposal signature does not verify", h)
		}
		for _, typ := range []gnotypes.SignedMsgType{gnotypes.PrevoteType, gnotypes.PrecommitType} {
			v := &gnotypes.Vote{Type: typ, Height: h, BlockID: gnoBlockID(byte(h), 0, 1), Timestamp: ts, ValidatorAddress: pk.Address()}
			if err := pv.SignVote(skChain, v); err != nil {
				t.Fatalf("height %d %v: %v", h, typ, err)
			}
			if err := v.Verify(skChain, pk); err != nil {
				t.Fatalf("height %d %v: gno's Verify: %v", h, typ, err)
			}
			if !ed25519.Verify(pub, v.SignBytes(skChain), v.Signature) {
				t.Fatalf("height %d %v: crypto/ed25519", h, typ)
			}
		}
	}
}

// checkPhaseCounts checks /metrics counts exactly n signs per phase, and
// refused double signs at prevote.
func checkPhaseCounts(t *testing.T, p *skProc, n, refused float64) {
	t.Helper()
	for _, ph := range []string{"proposal", "prevote", "precommit"} {
		p.waitMetric(t, n, "signerkit_requests_total", "chain", skChain, "phase", ph, "outcome", "signed")
		if c := p.metric(t, "signerkit_request_duration_seconds_count", "chain", skChain, "phase", ph); c < n {
			t.Errorf("request_duration_seconds_count{%s} = %v, want ≥ %v", ph, c, n)
		}
	}
	p.waitMetric(t, refused, "signerkit_double_sign_refusals_total", "chain", skChain, "phase", "prevote")
	if got := len(refusedLine.FindAllString(p.log.String(), -1)); float64(got) != refused {
		t.Errorf("%d double-sign refusals logged, want %v", got, refused)
	}
	p.waitMetric(t, float64(skHeights), "signerkit_last_signed_height", "chain", skChain)
}

// TestDaemonGnoTMKMS: gno v1.7.1's tmkms_listener over TCP, as a node runs
// it (upstream.TCPListener: SecretConnection and allowed_kms_pubkeys),
// against the signerkit binary with each backend; a conflicting prevote
// is refused with the connection kept; /metrics counts each phase.
func TestDaemonGnoTMKMS(t *testing.T) {
	for _, name := range skBackends {
		t.Run(name, func(t *testing.T) {
			b := newBackend(t, name, 0x71)
			nodeKey := pvIdentity(0x61)
			ln := pvListen(t, "tcp")
			cfgPath, id := skSetup(t, "tm2-tmkms", b.uri,
				fmt.Sprintf("  addr = \"tcp://%s\"\n  allow = [\"%x\"]", ln.Addr(), []byte(pvPub(nodeKey))))
			l := upstream.NewTCPListener(ln.(*net.TCPListener), gnoed25519.PrivKeyEd25519(nodeKey),
				[]gnoed25519.PubKeyEd25519{gnoed25519.PubKeyEd25519(id)})
			sc, err := upstream.NewSignerClient(upstream.NewSignerListenerEndpoint(nopSlog(), l), skChain)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = sc.Close() })
			p := skStart(t, cfgPath)
			if err := sc.Init(20 * time.Second); err != nil {
				t.Fatal(err)
			}
			gnoSignHeights(t, sc, b.pub, 1, skHeights)
			conflict := &gnotypes.Vote{Type: gnotypes.PrevoteType, Height: skHeights, BlockID: gnoBlockID(0xee, 0, 1),
				Timestamp: time.Now().UTC(), ValidatorAddress: sc.PubKey().Address()}
			err = sc.SignVote(skChain, conflict)
			var rse *upstream.WrappedRemoteSignerError
			if !errors.As(err, &rse) || rse.Code != int32(spv.CodeDoubleSign) || conflict.Signature != nil {
				t.Fatalf("conflicting prevote: %v", err)
			}
			if err := sc.Ping(); err != nil {
				t.Fatalf("ping after the refusal: %v", err)
			}
			checkPhaseCounts(t, p, skHeights, 1)
			p.waitMetric(t, 1, "signerkit_validator_connects_total", "chain", skChain)
			p.stop(t)
		})
	}
}

var listenAddr = regexp.MustCompile(`msg="listening for the validator".* listen=([0-9.:]+)`)

// TestDaemonGnoNative: gno v1.7.1's native remote-signer client over TCP
// (tm2's SecretConnection and tcp_authorized_keys), under gno's
// PrivValidator, dialing the signerkit binary (tm2-remote), with the key
// on a SoftHSM2 token and in a keybase; a second node with the same key
// and a fresh state of its own is refused at the heights already signed.
func TestDaemonGnoNative(t *testing.T) {
	for _, name := range []string{"softhsm", "keybase"} {
		t.Run(name, func(t *testing.T) {
			b := newBackend(t, name, 0x72)
			nodeKey := pvIdentity(0x63)
			cfgPath, id := skSetup(t, "tm2-remote", b.uri,
				fmt.Sprintf("  addr = \"tcp://127.0.0.1:0\"\n  allow = [\"%x\"]", []byte(pvPub(nodeKey))))
			p := skStart(t, cfgPath)
			m := p.waitLog(t, listenAddr)
			opts := []client.Option{client.WithClientPrivKey(gnoed25519.PrivKeyEd25519(nodeKey)),
				client.WithAuthorizedKeys([]gnoed25519.PubKeyEd25519{gnoed25519.PubKeyEd25519(id)})}
			newPV := func() gnotypes.PrivValidator {
				c, err := gnoNativeClient(context.Background(), "tcp://"+m[1], opts...)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = c.Close() })
				pv, err := gnoprivval.NewPrivValidator(c, filepath.Join(t.TempDir(), "state.json"))
				if err != nil {
					t.Fatal(err)
				}
				return pv
			}
			pv := newPV()
			gnoSignHeights(t, pv, b.pub, 1, skHeights)
			pv2 := newPV()
			conflict := &gnotypes.Vote{Type: gnotypes.PrevoteType, Height: skHeights, BlockID: gnoBlockID(0xee, 0, 1),
				Timestamp: time.Now().UTC(), ValidatorAddress: pv2.PubKey().Address()}
			if err := pv2.SignVote(skChain, conflict); !errors.Is(err, client.ErrResponseContainsError) || conflict.Signature != nil {
				t.Fatalf("second node's conflicting prevote: %v", err)
			}
			checkPhaseCounts(t, p, skHeights, 1)
			p.waitMetric(t, 2, "signerkit_validator_connected", "chain", skChain)
			p.stop(t)
		})
	}
}

// TestDaemonReconnectStorm: gno's native client, refused (its identity
// not on signerkit's allowlist), redials at once and for ever, from the
// same host as the real validator. signerkit never delays a handshake, so
// that such a client cannot hold the validator back: it holds each failed
// connection open (tarpits it) before closing it, counts it, and caps the
// connections pending per host, shedding failed ones first. The storm
// costs one handshake per dial; meanwhile the allowlisted node connects
// and signs within 1 s, and the refused one never gets the public key.
func TestDaemonReconnectStorm(t *testing.T) {
	b := newBackend(t, "keybase", 0x75)
	cfgPath, id := skSetup(t, "tm2-remote", b.uri,
		fmt.Sprintf("  addr = \"tcp://127.0.0.1:0\"\n  allow = [\"%x\"]", []byte(pvPub(pvIdentity(0x65)))))
	p := skStart(t, cfgPath)
	m := p.waitLog(t, listenAddr)
	ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	defer cancel()
	stormErr := make(chan error, 1)
	go func() {
		c, err := gnoNativeClient(ctx, "tcp://"+m[1], client.WithClientPrivKey(gnoed25519.PrivKeyEd25519(pvIdentity(0x66))),
			client.WithAuthorizedKeys([]gnoed25519.PubKeyEd25519{gnoed25519.PubKeyEd25519(id)}), client.WithDialMaxRetries(0))
		if err == nil {
			_ = c.Close()
		}
		stormErr <- err
	}()
	for p.metric(t, "signerkit_validator_disconnects_total", "chain", skChain, "reason", "unauthorized") < 1 {
		if ctx.Err() != nil {
			t.Fatal("no handshake refused")
		}
		time.Sleep(5 * time.Millisecond)
	}
	start := time.Now()
	good, err := gnoNativeClient(context.Background(), "tcp://"+m[1], client.WithClientPrivKey(gnoed25519.PrivKeyEd25519(pvIdentity(0x65))),
		client.WithAuthorizedKeys([]gnoed25519.PubKeyEd25519{gnoed25519.PubKeyEd25519(id)}))
	if err != nil {
		t.Fatalf("the allowlisted node during the storm: %v", err)
	}
	pv, err := gnoprivval.NewPrivValidator(good, filepath.Join(t.TempDir(), "state.json"))
	if err != nil {
		t.Fatal(err)
	}
	gnoSignHeights(t, pv, b.pub, 1, 1)
	took := time.Since(start)
	_ = good.Close()
	if err := <-stormErr; err == nil {
		t.Fatal("a node not on the allowlist got the public key")
	}
	refused := p.metric(t, "signerkit_validator_disconnects_total", "chain", skChain, "reason", "unauthorized")
	throttled := p.metric(t, "signerkit_handshakes_throttled_total", "chain", skChain)
	t.Logf("over 1.5 s: %v handshakes refused, %v tarpitted; the allowlisted node connected and signed in %v", refused, throttled, took)
	if refused < 1 || throttled < 1 {
		t.Fatalf("refused = %v, throttled = %v", refused, throttled)
	}
	if took > time.Second {
		t.Fatalf("the allowlisted node took %v to connect and sign during the storm", took)
	}
	p.stop(t)
}
