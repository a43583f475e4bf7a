package signerkit_test

import (
	"context"
	"regexp"
	"slices"
	"strings"
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
			// SoftHSM2 reads SOFTHSM2_CONF, one per process, when a
			// token opens: those rows run one at a time, before the
			// others, which share nothing but the keybase key (which
			// signs concurrently) and run in parallel.
			if !strings.Contains(be.Name, "pkcs11") {
				t.Parallel()
			}
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

// TestVerifyCases runs every registered verification case at its smallest
// and largest payload: the verification must pass, and must fail once a
// bit of the signature or of the message is flipped or the signature is
// cut short, so a verify that accepts anything fails here. A case must
// set Sign for that to be tried.
func TestVerifyCases(t *testing.T) {
	name := regexp.MustCompile(`^[a-z0-9][a-z0-9-]*$`)
	seen := map[string]bool{}
	for _, c := range bench.VerifyCases() {
		if !name.MatchString(c.Name) {
			t.Errorf("verify case name %q is not lowercase letters, digits and dashes", c.Name)
		}
		seen[c.Name] = true
		t.Run(c.Name, func(t *testing.T) {
			t.Parallel()
			if reason := c.SkipReason(); reason != "" {
				t.Skip(reason)
			}
			sizes := c.Sizes()
			if len(sizes) == 0 {
				t.Fatal("no payload sizes")
			}
			if c.Sign == nil {
				t.Fatal("the case has Setup alone, so a corrupted signature cannot be tried: set Sign")
			}
			// The Setup that RegisterVerify derives from Sign is tested in
			// internal/bench; Sign is what a case brings.
			for _, size := range slices.Compact([]int{slices.Min(sizes), slices.Max(sizes)}) {
				s, err := c.Sign(size)
				if err != nil {
					t.Fatalf("sign payload=%d: %v", size, err)
				}
				if err := s.Verify(s.Msg, s.Sig); err != nil {
					t.Errorf("payload=%d: Sign's own signature: %v", size, err)
				}
				for _, bit := range []int{0, len(s.Sig) * 4, len(s.Sig)*8 - 1} {
					sig := slices.Clone(s.Sig)
					sig[bit/8] ^= 1 << (bit % 8)
					if s.Verify(s.Msg, sig) == nil {
						t.Errorf("payload=%d: verifies with bit %d of the signature flipped", size, bit)
					}
				}
				msg := slices.Clone(s.Msg)
				msg[len(msg)-1] ^= 1
				if s.Verify(msg, s.Sig) == nil {
					t.Errorf("payload=%d: verifies with the message's last bit flipped", size)
				}
				if s.Verify(s.Msg, s.Sig[:len(s.Sig)-1]) == nil {
					t.Errorf("payload=%d: verifies with the signature's last byte cut off", size)
				}
			}
		})
	}
	for _, want := range []string{"ed25519", "p256", "p384", "secp256k1",
		"rsa2048-pkcs1v15", "rsa2048-pss", "rsa4096-pkcs1v15", "rsa4096-pss"} {
		if !seen[want] {
			t.Errorf("verify case %s is not registered", want)
		}
	}
}

// TestLargePayloads checks that the in-process rows sign up to 1 MiB, the
// device and protocol rows do not (see bench.LargePayloads), and that
// LargePayloads extends Payloads without sharing its array.
func TestLargePayloads(t *testing.T) {
	if got, want := bench.LargePayloads, append(slices.Clone(bench.Payloads), 1<<20); !slices.Equal(got, want) {
		t.Errorf("LargePayloads = %v, want %v", got, want)
	}
	if len(bench.Payloads) > 0 && &bench.Payloads[0] == &bench.LargePayloads[0] {
		t.Error("LargePayloads shares Payloads' array")
	}
	device := regexp.MustCompile(`^(raw-)?(ledger|yubihsm|pkcs11|keybase|privval|raw-socket)-`)
	inProcess := regexp.MustCompile(`^(raw-ed25519$|inprocess-|bls-|raw-(blst|circl)-)`)
	for _, be := range bench.Backends() {
		big := slices.Max(be.Sizes()) >= 1<<20
		switch {
		case inProcess.MatchString(be.Name) && !big:
			t.Errorf("%s: sizes %v; an in-process or BLS row goes up to 1 MiB", be.Name, be.Sizes())
		case device.MatchString(be.Name) && big:
			t.Errorf("%s: sizes %v; a device or protocol row keeps its own limits", be.Name, be.Sizes())
		}
	}
}
