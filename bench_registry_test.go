package signerkit_test

import (
	"context"
	"regexp"
	"testing"

	"github.com/signerkit/signerkit/internal/bench"
	"github.com/signerkit/signerkit/signer"
)

// TestBackendsSign opens every registered backend for every row of its
// table and checks that one signature verifies with the standard library,
// so a row that would fail only under -bench fails here first.
func TestBackendsSign(t *testing.T) {
	name := regexp.MustCompile(`^[a-z0-9][a-z0-9-]*$`)
	seen := map[string]bool{}
	for _, be := range bench.Backends() {
		if !name.MatchString(be.Name) {
			t.Errorf("backend name %q is not lowercase letters, digits and dashes", be.Name)
		}
		seen[be.Name] = true
		if be.Validator && be.Algorithm != signer.Ed25519 {
			t.Errorf("%s: a validator path must sign Ed25519, not %v", be.Name, be.Algorithm)
		}
		t.Run(be.Name, func(t *testing.T) {
			if reason := be.SkipReason(); reason != "" {
				t.Skip(reason)
			}
			chunks := be.Chunks
			if len(chunks) == 0 {
				chunks = []int{0}
			}
			// The smallest and the largest payload of every chunk size: the
			// rows between them differ only in the message length, and CI
			// runs every row once anyway (-benchtime 1x). Backends that pay
			// a bcrypt at cost 12 per open and per sign stay affordable
			// under -race this way.
			sizes := be.Sizes()
			if len(sizes) > 2 {
				sizes = []int{sizes[0], sizes[len(sizes)-1]}
			}
			for _, size := range sizes {
				for _, chunk := range chunks {
					inst, err := be.Open(context.Background(), bench.Params{Payload: size, Chunk: chunk})
					if err != nil {
						t.Fatalf("open payload=%d chunk=%d: %v", size, chunk, err)
					}
					msg := be.MessageSource(size)()
					sig, err := inst.Sign(context.Background(), msg)
					if err != nil {
						t.Errorf("sign payload=%d chunk=%d: %v", size, chunk, err)
					} else if err := inst.Verify(be, msg, sig); err != nil {
						t.Errorf("payload=%d chunk=%d: %v", size, chunk, err)
					}
					if inst.Close != nil {
						if err := inst.Close(); err != nil {
							t.Errorf("close: %v", err)
						}
					}
				}
			}
		})
	}
	for _, want := range []string{"raw-ed25519", "inprocess-ed25519", "inprocess-ed25519-traced",
		"keybase-unlocked-ed25519", "keybase-persign-ed25519", "ledger-hid", "ledger-ledgergo",
		"yubihsm-ed25519", "yubihsm-p256", "pkcs11-softhsm-ed25519", "pkcs11-softhsm-p256",
		"pkcs11-softhsm-rsa2048", "pkcs11-softhsm-rsa4096", "raw-pkcs11-softhsm-ed25519"} {
		if !seen[want] {
			t.Errorf("backend %s is not registered", want)
		}
	}
}
