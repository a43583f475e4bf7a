package bench

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"sync"

	"github.com/signerkit/signerkit/keybase"
	"github.com/signerkit/signerkit/signer"
)

func init() {
	// A gnokey key file (bcrypt cost 12, as gnokey writes it) opened once
	// and kept unlocked: judged against inprocess-ed25519.
	Register(Backend{Name: "keybase-unlocked-ed25519", Algorithm: signer.Ed25519, Open: openKeybase(keybase.UnlockOnce), Traced: true})
	// The same file decrypted on every sign, as gnokey's keybase.Sign does
	// (protocols.md C.4): one bcrypt at cost 12 per sign, reported as the
	// kdf stage.
	Register(Backend{Name: "keybase-persign-ed25519", Algorithm: signer.Ed25519, Open: openKeybase(keybase.PerSign), Traced: true})
}

const keybasePassphrase = "bench passphrase"

// keybaseArmor is encrypted once: each cost-12 derivation takes a quarter
// of a second.
var keybaseArmor = sync.OnceValues(func() ([]byte, error) {
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, err
	}
	return keybase.EncryptArmor(context.Background(), priv, []byte(keybasePassphrase), keybase.DefaultCost)
})

func openKeybase(mode keybase.Mode) func(context.Context, Params) (*Instance, error) {
	return func(ctx context.Context, _ Params) (*Instance, error) {
		armor, err := keybaseArmor()
		if err != nil {
			return nil, err
		}
		k, err := keybase.OpenArmor(ctx, armor, keybase.PassphraseBytes([]byte(keybasePassphrase)), mode)
		if err != nil {
			return nil, err
		}
		return FromSigner(k), nil
	}
}
