package keybase

import (
	"context"
	"crypto/ed25519"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/signerkit/signerkit/signer"
)

// wantPassphraseError checks that err is a *PassphraseError for label,
// reachable by errors.As, that it still wraps signer.ErrWrongPassphrase,
// and that its message holds the label and never the passphrase.
func wantPassphraseError(t *testing.T, what string, err error, label, pass string) {
	t.Helper()
	var pe *PassphraseError
	if !errors.As(err, &pe) {
		t.Errorf("%s: got %v (%T), want a *PassphraseError", what, err, err)
		return
	}
	if pe.Label != label {
		t.Errorf("%s: Label %q, want %q", what, pe.Label, label)
	}
	if !errors.Is(err, signer.ErrWrongPassphrase) {
		t.Errorf("%s: %v does not wrap signer.ErrWrongPassphrase", what, err)
	}
	if label != "" && !strings.Contains(err.Error(), `"`+label+`"`) {
		t.Errorf("%s: %q does not name the key %q", what, err, label)
	}
	if strings.Contains(err.Error(), pass) {
		t.Errorf("%s: %q holds the passphrase", what, err)
	}
}

func TestPassphraseErrorEveryPath(t *testing.T) {
	ctx := context.Background()
	const wrong = "wrong-passphrase-xyzzy"
	s := testStore(t)
	if _, err := s.GenerateKey(ctx, signer.Ed25519, "validator"); err != nil {
		t.Fatal(err)
	}
	nope := s.with(secretOf(wrong), UnlockOnce)

	_, err := nope.OpenKey(ctx, signer.KeyRef{Label: "validator"})
	wantPassphraseError(t, "OpenKey", err, "validator", wrong)

	_, err = Open(ctx, Config{Dir: s.Dir(), Secret: secretOf(wrong), Key: signer.KeyRef{Label: "validator"}})
	wantPassphraseError(t, "Open", err, "validator", wrong)

	err = nope.ChangePassphrase(ctx, "validator", secretOf("new"))
	wantPassphraseError(t, "ChangePassphrase", err, "validator", wrong)

	armor, err := s.ExportArmor(ctx, "validator") // needs no passphrase
	if err != nil {
		t.Fatal(err)
	}
	_, err = DecryptArmor(ctx, armor, []byte(wrong))
	wantPassphraseError(t, "DecryptArmor", err, "", wrong)

	for _, mode := range []Mode{UnlockOnce, PerSign} {
		_, err = OpenArmor(ctx, armor, secretOf(wrong), mode)
		wantPassphraseError(t, "OpenArmor "+mode.String(), err, "", wrong)
	}

	_, err = testStore(t).with(secretOf(wrong), UnlockOnce).ImportArmor(ctx, armor, "imported")
	wantPassphraseError(t, "ImportArmor", err, "imported", wrong)

	// PerSign: the passphrase is asked again on every sign; one that
	// changes after the open fails the sign with the same error.
	var calls atomic.Int32
	flaky := func() ([]byte, error) {
		if calls.Add(1) == 1 {
			return pw()
		}
		return []byte(wrong), nil
	}
	sg, err := s.with(flaky, PerSign).OpenKey(ctx, signer.KeyRef{Label: "validator"})
	if err != nil {
		t.Fatal(err)
	}
	defer sg.Close()
	_, err = sg.SignContext(ctx, []byte("vote"))
	wantPassphraseError(t, "PerSign SignContext", err, "validator", wrong)
	_, err = sg.(*Signer).Sign(nil, []byte("vote"), &ed25519.Options{})
	wantPassphraseError(t, "PerSign Sign", err, "validator", wrong)

	// PerSign over armor: no label.
	calls.Store(0)
	as, err := OpenArmor(ctx, armor, flaky, PerSign)
	if err != nil {
		t.Fatal(err)
	}
	defer as.Close()
	_, err = as.SignContext(ctx, []byte("vote"))
	wantPassphraseError(t, "OpenArmor PerSign SignContext", err, "", wrong)
}

func TestPassphraseErrorUnencrypted(t *testing.T) {
	ctx := context.Background()
	priv := ed25519.NewKeyFromSeed(make([]byte, ed25519.SeedSize))
	armor, err := EncryptArmor(ctx, priv, nil, MinCost)
	if err != nil {
		t.Fatal(err)
	}
	_, err = DecryptArmor(ctx, armor, []byte("not-empty"))
	wantPassphraseError(t, "DecryptArmor of unencrypted armor", err, "", "not-empty")
	var pe *PassphraseError
	if errors.As(err, &pe) && !pe.Unencrypted {
		t.Errorf("Unencrypted not set: %v", err)
	}
	if !strings.Contains(err.Error(), "unencrypted") {
		t.Errorf("%q does not say the key is unencrypted", err)
	}
}

func TestPassphraseErrorMessage(t *testing.T) {
	for _, c := range []struct {
		e    PassphraseError
		want string
	}{
		{PassphraseError{}, "keybase: signer: wrong passphrase"},
		{PassphraseError{Label: "validator"}, `keybase: key "validator": signer: wrong passphrase`},
		{PassphraseError{Label: "v", Unencrypted: true}, `keybase: key "v": the key is stored unencrypted and opens only with an empty passphrase: signer: wrong passphrase`},
	} {
		if got := c.e.Error(); got != c.want {
			t.Errorf("%+v: %q, want %q", c.e, got, c.want)
		}
	}
}
