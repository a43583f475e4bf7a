package openpgpcard_test

import (
	"context"
	"crypto"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"sync"
	"testing"
	"time"

	"github.com/signerkit/signerkit/openpgpcard"
	"github.com/signerkit/signerkit/openpgpcard/cardsim"
	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/signer/signertrace"
)

// benchKey is one Ed25519 key for the host-cost benchmarks.
var benchKey = sync.OnceValue(func() ed25519.PrivateKey {
	_, k, _ := ed25519.GenerateKey(rand.Reader)
	return k
})

// BenchmarkHost measures what a sign costs the host over the in-memory
// transport (framing, the APDU, the verify of the signature): an Ed25519
// key on a card with no modeled time, its PW1 status byte 01 so that PW1
// stays verified and a sign is one APDU (pw1=each: 00, VERIFY before every
// signature, two APDUs). card-only is the simulated card's own work for
// the sign's APDU (its Ed25519 signature), to subtract; verify-only the
// ed25519.Verify every sign makes before returning. BenchmarkPCSCFloor
// (cgo, Linux, pcscd) is its PC/SC half: run both in one go test.
func BenchmarkHost(b *testing.B) {
	for _, multi := range []bool{true, false} {
		name := "via=memory"
		if !multi {
			name += "/pw1=each"
		}
		b.Run(name, func(b *testing.B) {
			s, err := openpgpcard.Open(context.Background(), userConfig(benchCard(b, multi), openpgpcard.KeySign))
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			benchSign(b, s)
		})
	}
	b.Run("via=verify-only", func(b *testing.B) {
		msg := make([]byte, 32)
		sig := ed25519.Sign(benchKey(), msg)
		pub := benchKey().Public().(ed25519.PublicKey)
		for b.Loop() {
			if !ed25519.Verify(pub, msg, sig) {
				b.Fatal("does not verify")
			}
		}
	})
	b.Run("via=card-only", func(b *testing.B) {
		card := benchCard(b, true)
		card.Transmit(selectApp)
		card.Transmit(append([]byte{0x00, 0x20, 0x00, 0x81, 6}, cardsim.DefaultPW1...))
		cds := append([]byte{0x00, 0x2A, 0x9E, 0x9A, 32}, make([]byte, 32)...)
		for b.Loop() {
			card.Transmit(cds)
		}
	})
}

var selectApp = append([]byte{0x00, 0xA4, 0x04, 0x00, byte(len(cardsim.AID))}, cardsim.AID...)

// benchCard is a card with no modeled time holding benchKey in its
// signature slot, its PW1 status byte 01 when multi.
func benchCard(b *testing.B, multi bool) *cardsim.Card {
	card := cardsim.New(cardsim.Config{Profile: cardsim.Instant})
	if err := card.ImportKey(cardsim.SlotSign, benchKey()); err != nil {
		b.Fatal(err)
	}
	setPW1Multi(b, card, multi)
	return card
}

// setPW1Multi writes the PW1 status byte with PUT DATA after VERIFY of
// PW3, as `gpg --card-edit` does for forcesig. The last SELECT forgets
// every verification, so Signers opened afterwards start afresh.
func setPW1Multi(b *testing.B, card *cardsim.Card, multi bool) {
	v := byte(0)
	if multi {
		v = 1
	}
	for _, apdu := range [][]byte{
		selectApp,
		append([]byte{0x00, 0x20, 0x00, 0x83, byte(len(cardsim.DefaultPW3))}, cardsim.DefaultPW3...),
		{0x00, 0xDA, 0x00, 0xC4, 0x01, v},
		selectApp,
	} {
		if resp := card.Transmit(apdu); len(resp) < 2 || resp[len(resp)-2] != 0x90 {
			b.Fatalf("%x answered %x", apdu, resp)
		}
	}
}

func benchSign(b *testing.B, s signer.Signer) {
	msg := make([]byte, 32)
	for b.Loop() {
		if _, err := s.SignContext(context.Background(), msg); err != nil {
			b.Fatal(err)
		}
	}
}

// rsaKeys are generated once per test binary: a 4096-bit key takes
// seconds.
var rsaKeys = map[int]func() (*rsa.PrivateKey, error){
	2048: sync.OnceValues(func() (*rsa.PrivateKey, error) { return rsa.GenerateKey(rand.Reader, 2048) }),
	4096: sync.OnceValues(func() (*rsa.PrivateKey, error) { return rsa.GenerateKey(rand.Reader, 4096) }),
}

// BenchmarkDecipher runs PSO:DECIPHER on each token's RSA keys and
// reports the modeled card time beside the host's.
func BenchmarkDecipher(b *testing.B) {
	for _, p := range cardsim.Profiles() {
		for _, a := range p.Algorithms {
			bits := map[cardsim.Algorithm]int{cardsim.RSA2048: 2048, cardsim.RSA4096: 4096}[a]
			if bits == 0 {
				continue
			}
			b.Run("token="+p.Short()+"/alg="+a.String(), func(b *testing.B) { benchDecipher(b, p, bits) })
		}
	}
}

func benchDecipher(b *testing.B, p cardsim.Profile, bits int) {
	priv, err := rsaKeys[bits]()
	if err != nil {
		b.Fatal(err)
	}
	//lint:ignore SA1019 OpenPGP RSA encryption is PKCS #1 v1.5 (RFC 4880 5.1), what the card deciphers
	ct, err := rsa.EncryptPKCS1v15(rand.Reader, &priv.PublicKey, make([]byte, 32))
	if err != nil {
		b.Fatal(err)
	}
	card := cardsim.New(cardsim.Config{Profile: p})
	if err := card.ImportKey(cardsim.SlotDecrypt, priv); err != nil {
		b.Fatal(err)
	}
	s, err := openpgpcard.Open(context.Background(), userConfig(card, openpgpcard.KeyDecrypt))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	col := signertrace.NewCollector()
	ctx := col.WithContext(context.Background())
	for b.Loop() {
		if _, err := s.DecryptContext(ctx, ct, crypto.DecrypterOpts(nil)); err != nil {
			b.Fatal(err)
		}
	}
	sum := col.Summary()
	modeled := sum.Stage(signertrace.StageDevice).Modeled + sum.Stage(signertrace.StageWire).Modeled
	b.ReportMetric(float64(modeled)/float64(time.Millisecond)/float64(b.N), "modeled-ms/op")
}
