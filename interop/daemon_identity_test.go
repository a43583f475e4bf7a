package interop

import (
	"context"
	"fmt"
	"net"
	"regexp"
	"testing"
	"time"

	gnoprivval "github.com/gnolang/gno/tm2/pkg/bft/privval"
	"github.com/gnolang/gno/tm2/pkg/bft/privval/signer/remote/client"
	"github.com/gnolang/gno/tm2/pkg/bft/privval/upstream"
	gnocrypto "github.com/gnolang/gno/tm2/pkg/crypto"
	gnoed25519 "github.com/gnolang/gno/tm2/pkg/crypto/ed25519"
)

var identityHint = regexp.MustCompile(`its allowlist likely lacks this signer's identity.* identity=(\S+)`)

// TestDaemonIdentityRefusedByNode: a gno node whose allowlist lacks
// signerkit's identity hangs up right after the handshake, saying
// nothing. signerkit names the likely cause and logs its identity as that
// node's setting takes it, which gno's own parser reads as the key:
// ed25519:<hex> for the tmkms_listener (allowed_kms_pubkeys), gpub1… for
// the native remote signer (tcp_authorized_keys).
func TestDaemonIdentityRefusedByNode(t *testing.T) {
	other := gnoed25519.PubKeyEd25519(pvPub(pvIdentity(0x6f)))
	t.Run("tm2-tmkms", func(t *testing.T) {
		b := newBackend(t, "keybase", 0x76)
		nodeKey := pvIdentity(0x64)
		ln := pvListen(t, "tcp")
		cfgPath, id := skSetup(t, "tm2-tmkms", b.uri,
			fmt.Sprintf("  addr = \"tcp://%s\"\n  allow = [\"%x\"]", ln.Addr(), []byte(pvPub(nodeKey))))
		l := upstream.NewTCPListener(ln.(*net.TCPListener), gnoed25519.PrivKeyEd25519(nodeKey), []gnoed25519.PubKeyEd25519{other})
		go func() {
			for {
				c, err := l.Accept()
				if c != nil {
					_ = c.Close()
				}
				if err != nil && !isTemporary(err) {
					return
				}
			}
		}()
		p := skStart(t, cfgPath)
		m := p.waitLog(t, identityHint)
		if want := fmt.Sprintf("ed25519:%x", []byte(id)); m[1] != want {
			t.Fatalf("logged identity %s, want %s", m[1], want)
		}
		tmkms := gnoTmkmsAllowlist(t, m[1])
		if len(tmkms) != 1 || string(tmkms[0][:]) != string(id) {
			t.Fatalf("gno reads %s as %x", m[1], tmkms)
		}
		_ = l.Close()
		p.stop(t)
	})
	t.Run("tm2-remote", func(t *testing.T) {
		b := newBackend(t, "keybase", 0x77)
		nodeKey := pvIdentity(0x65)
		cfgPath, id := skSetup(t, "tm2-remote", b.uri,
			fmt.Sprintf("  addr = \"tcp://127.0.0.1:0\"\n  allow = [\"%x\"]", []byte(pvPub(nodeKey))))
		p := skStart(t, cfgPath)
		addr := p.waitLog(t, listenAddr)[1]
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		go func() {
			c, err := gnoNativeClient(ctx, "tcp://"+addr, client.WithClientPrivKey(gnoed25519.PrivKeyEd25519(nodeKey)),
				client.WithAuthorizedKeys([]gnoed25519.PubKeyEd25519{other}))
			if err == nil {
				_ = c.Close()
			}
		}()
		m := p.waitLog(t, identityHint)
		pub, err := gnocrypto.PubKeyFromBech32(m[1])
		if err != nil || string(pub.Bytes()[len(pub.Bytes())-32:]) != string(id) {
			t.Fatalf("logged identity %s reads as %v, %v; want %x", m[1], pub, err, []byte(id))
		}
		cancel()
		p.stop(t)
	})
}

func isTemporary(err error) bool {
	ne, ok := err.(net.Error)
	return ok && ne.Timeout()
}

func gnoTmkmsAllowlist(t *testing.T, entry string) []gnoed25519.PubKeyEd25519 {
	t.Helper()
	cfg := gnoprivval.DefaultTmkmsListenerConfig()
	cfg.AllowedKMSPubKeys = []string{entry}
	keys, err := cfg.ParseAllowlist()
	if err != nil {
		t.Fatal(err)
	}
	return keys
}
