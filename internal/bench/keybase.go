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
	Register(Backend{Name: "keybase-unlocked-ed25519", Algorithm: signer.Ed25519, Open: openKeybase(keybaseUnlocked), Traced: true, Validator: true})
	// The same file decrypted on every sign, as gnokey's keybase.Sign does
	// (docs/protocols.md C.4): one bcrypt at cost 12 per sign, reported as the
	// kdf stage.
	Register(Backend{Name: "keybase-persign-ed25519", Algorithm: signer.Ed25519, Open: openKeybase(keybasePerSign), Traced: true, Validator: true})
}

const keybasePassphrase = "bench passphrase"

// Every cost-12 key derivation takes a quarter of a second (ten times that
// under -race), so the key is encrypted once and each mode's Signer opened
// once, then shared by the rows of the table for the life of the process;
// the per-sign rows still derive the key on every sign, which is their
// point.
var (
	keybaseArmor = sync.OnceValues(func() ([]byte, error) {
		_, priv, err := ed25519.GenerateKey(rand.Reader)
		if err != nil {
			return nil, err
		}
		return keybase.EncryptArmor(context.Background(), priv, []byte(keybasePassphrase), keybase.DefaultCost)
	})
	keybaseUnlocked = sync.OnceValues(func() (*keybase.Signer, error) { return openKeybaseSigner(keybase.UnlockOnce) })
	keybasePerSign  = sync.OnceValues(func() (*keybase.Signer, error) { return openKeybaseSigner(keybase.PerSign) })
)

func openKeybaseSigner(mode keybase.Mode) (*keybase.Signer, error) {
	armor, err := keybaseArmor()
	if err != nil {
		return nil, err
	}
	return keybase.OpenArmor(context.Background(), armor, signer.SecretBytes([]byte(keybasePassphrase)), mode)
}

func openKeybase(shared func() (*keybase.Signer, error)) func(context.Context, Params) (*Instance, error) {
	return func(context.Context, Params) (*Instance, error) {
		k, err := shared()
		if err != nil {
			return nil, err
		}
		inst := FromSigner(k)
		inst.Close = nil // shared by every row
		return inst, nil
	}
}
