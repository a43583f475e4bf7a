package interop

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/decred/dcrd/dcrec/secp256k1/v4"

	"github.com/gnolang/gno/tm2/pkg/amino"
	gnocrypto "github.com/gnolang/gno/tm2/pkg/crypto"
	gnoed25519 "github.com/gnolang/gno/tm2/pkg/crypto/ed25519"
	"github.com/gnolang/gno/tm2/pkg/crypto/keys"
	"github.com/gnolang/gno/tm2/pkg/crypto/multisig"
	gnosecp256k1 "github.com/gnolang/gno/tm2/pkg/crypto/secp256k1"
	dbm "github.com/gnolang/gno/tm2/pkg/db"
	_ "github.com/gnolang/gno/tm2/pkg/db/goleveldb"

	"github.com/signerkit/signerkit/keybase"
	"github.com/signerkit/signerkit/keybase/gnokeyhome"
	"github.com/signerkit/signerkit/signer"
)

// The gnokey home this test builds with gno's own keybase (and, with
// SIGNERKIT_WRITE_GNOKEYHOME set to a directory, copies there: the
// fixture keybase/gnokeyhome/testdata/gnokey-home is written so).
const (
	gkPass = "fixture passphrase"
	// gkMnemonic is BIP39's all-"abandon" test mnemonic: `gnokey add
	// --recover` derives 44'/118'/0'/0/0 from it.
	gkMnemonic = "abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about"

	gkValidator = "validator"                                // local, secp256k1, from the mnemonic (gnokey add --recover)
	gkEd25519   = "my key/ed25519 ✓"                         // local, Ed25519 (gnokey import), a name no file can have
	gkPlain     = "plain"                                    // local, secp256k1, empty passphrase: stored unencrypted
	gkOffline   = "offline"                                  // offline (gnokey add bech32)
	gkMulti     = "multi 2-of-3"                             // multisig (gnokey add multisig)
	gkLedger    = "ledger"                                   // a Ledger reference (gnokey add --ledger)
	gkAddrName  = "g1jg8mtutu9khhfwc4nxmuhcpftf0pajdhfvsqf5" // a name that parses as an address no key has
)

// buildGnokeyHome makes a gnokey home with gno's own keybase
// (keys.NewKeyBaseFromDir, v1.7.1), with a key of every kind gnokey
// stores, and returns it and gno's view of its keys by name.
func buildGnokeyHome(t *testing.T) (string, map[string]keys.Info) {
	t.Helper()
	home := t.TempDir()
	kb, err := keys.NewKeyBaseFromDir(home)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kb.CreateAccount(gkValidator, gkMnemonic, "", gkPass, 0, 0); err != nil {
		t.Fatal(err)
	}
	if err := kb.ImportPrivKey(gkEd25519, gnoed25519.GenPrivKeyFromSecret([]byte("gnokeyhome ed25519")), gkPass); err != nil {
		t.Fatal(err)
	}
	if err := kb.ImportPrivKey(gkPlain, gnosecp256k1.GenPrivKeySecp256k1([]byte("gnokeyhome plain")), ""); err != nil {
		t.Fatal(err)
	}
	if err := kb.ImportPrivKey(gkAddrName, gnoed25519.GenPrivKeyFromSecret([]byte("gnokeyhome address-like name")), gkPass); err != nil {
		t.Fatal(err)
	}
	offPub := gnosecp256k1.GenPrivKeySecp256k1([]byte("gnokeyhome offline")).PubKey()
	if _, err := kb.CreateOffline(gkOffline, offPub); err != nil {
		t.Fatal(err)
	}
	v, err := kb.GetByName(gkValidator)
	if err != nil {
		t.Fatal(err)
	}
	e, err := kb.GetByName(gkEd25519)
	if err != nil {
		t.Fatal(err)
	}
	multi := multisig.NewPubKeyMultisigThreshold(2, []gnocrypto.PubKey{v.GetPubKey(), e.GetPubKey(), offPub})
	if _, err := kb.CreateMulti(gkMulti, multi); err != nil {
		t.Fatal(err)
	}
	// A Ledger reference needs a device (gno's mock is internal to gno):
	// gno's amino decodes one from its JSON and encodes it, and it is
	// written where keys.dbKeybase.writeInfo writes records.
	ledgerPub := gnosecp256k1.GenPrivKeySecp256k1([]byte("gnokeyhome ledger")).PubKey()
	var li keys.Info
	js := fmt.Sprintf(`{"@type":"/tm.keys.LedgerInfo","name":%q,"pubkey":%s,"path":{"purpose":44,"coinType":118,"account":3,"change":false,"addressIndex":1}}`,
		gkLedger, amino.MustMarshalJSONAny(ledgerPub))
	if err := amino.UnmarshalJSON([]byte(js), &li); err != nil {
		t.Fatal(err)
	}
	db, err := dbm.NewDB("keys", dbm.GoLevelDBBackend, filepath.Join(home, "data"))
	if err != nil {
		t.Fatal(err)
	}
	db.SetSync([]byte(gkLedger+".info"), amino.MustMarshalAnySized(li))
	db.SetSync([]byte(li.GetAddress().String()+".address"), []byte(gkLedger+".info"))
	db.Close()

	all, err := kb.List()
	if err != nil {
		t.Fatal(err)
	}
	infos := map[string]keys.Info{}
	for _, i := range all {
		infos[i.GetName()] = i
	}
	if li, ok := infos[gkLedger]; !ok || li.GetType() != keys.TypeLedger {
		t.Fatalf("gno does not read the Ledger record back: %v", infos[gkLedger])
	}
	if len(infos) != 7 {
		t.Fatalf("gno lists %d keys, want 7", len(infos))
	}
	return home, infos
}

// TestGnokeyHome opens a gnokey home that gno's own keybase wrote, lists
// every key as gnokey does (name, kind, address, public key, Ledger path),
// and signs with each local key by name and by address; gno's own
// PubKey.VerifyBytes checks every signature.
func TestGnokeyHome(t *testing.T) {
	ctx := context.Background()
	home, infos := buildGnokeyHome(t)
	if dir := os.Getenv("SIGNERKIT_WRITE_GNOKEYHOME"); dir != "" {
		copyDir(t, filepath.Join(home, "data", "keys.db"), filepath.Join(dir, "data", "keys.db"))
	}

	st, err := gnokeyhome.OpenStore(ctx, gnokeyhome.Config{Home: home, Secret: signer.SecretBytes([]byte(gkPass))})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	got, err := st.Keys(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for n := range infos {
		names = append(names, n)
	}
	sort.Strings(names)
	if len(got) != len(names) {
		t.Fatalf("Keys: %d keys, gno has %d", len(got), len(names))
	}
	for i, k := range got {
		gi := infos[names[i]]
		if k.Name != gi.GetName() || k.Kind.String() != gi.GetType().String() || k.Address != gi.GetAddress().String() {
			t.Errorf("key %d: %q %v %s; gno: %q %v %s", i, k.Name, k.Kind, k.Address, gi.GetName(), gi.GetType(), gi.GetAddress())
		}
		if !samePub(k.Public, gi.GetPubKey()) {
			t.Errorf("%q: public key %v, gno's %v", k.Name, k.Public, gi.GetPubKey())
		}
		if p, err := gi.GetPath(); err == nil && p.String() != k.Path || err != nil && k.Path != "" {
			t.Errorf("%q: path %q, gno's %v (%v)", k.Name, k.Path, p, err)
		}
		t.Logf("%-10q %-7v %s %s", k.Name, k.Kind, k.Address, k.Path)
	}

	msg := []byte("a tm2 transaction's sign bytes")
	for _, name := range []string{gkValidator, gkEd25519, gkPlain, gkAddrName} {
		gi := infos[name]
		pass := gkPass
		if name == gkPlain {
			pass = ""
		}
		for _, label := range []string{name, gi.GetAddress().String()} {
			sg, err := gnokeyhome.Open(ctx, gnokeyhome.Config{Home: home, Secret: signer.SecretBytes([]byte(pass)), Key: signer.KeyRef{Label: label}})
			if err != nil {
				t.Errorf("Open %q: %v", label, err)
				continue
			}
			sig, err := sg.SignContext(ctx, msg)
			sg.Close()
			if err != nil {
				t.Errorf("%q: sign: %v", label, err)
			} else if !gi.GetPubKey().VerifyBytes(msg, sig) {
				t.Errorf("%q: gno's VerifyBytes refuses the signature", label)
			}
		}
		// gno's own signature verifies under the key we read.
		gsig, _, err := keysFrom(t, home).Sign(gi.GetAddress().String(), pass, msg)
		if err != nil {
			t.Fatal(err)
		}
		k, err := st.KeyInfo(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		alg := k.Algorithm
		if alg == signer.ECDSASecp256k1 && len(gsig) != 64 {
			t.Errorf("%q: gno's secp256k1 signature is %d bytes", name, len(gsig))
		} else if err := alg.Verify(k.Public, msg, gsig); err != nil {
			t.Errorf("%q: gno's signature does not verify under the key read here: %v", name, err)
		}
	}

	// The name that parses as an address no key has is found by name,
	// as this package documents (gnokey itself finds it only by address).
	if k, err := st.KeyInfo(ctx, gkAddrName); err != nil || k.Name != gkAddrName {
		t.Errorf("KeyInfo(%q) = %v, %v", gkAddrName, k, err)
	}

	// A wrong passphrase: a *keybase.PassphraseError naming the key.
	_, err = gnokeyhome.Open(ctx, gnokeyhome.Config{Home: home, Secret: signer.SecretBytes([]byte("wrong")), Key: signer.KeyRef{Label: gkEd25519}})
	var pe *keybase.PassphraseError
	if !errors.As(err, &pe) || pe.Label != gkEd25519 || !errors.Is(err, signer.ErrWrongPassphrase) {
		t.Errorf("wrong passphrase: %v", err)
	}
	// Keys that hold no private key.
	for _, name := range []string{gkOffline, gkMulti, gkLedger} {
		var ke *gnokeyhome.KindError
		if _, err := st.OpenKey(ctx, signer.KeyRef{Label: name}); !errors.As(err, &ke) || !errors.Is(err, signer.ErrUnsupported) {
			t.Errorf("OpenKey(%q): %v, want a *KindError", name, err)
		}
	}

	// By URI, with the odd name percent-encoded.
	uri := "gnokeyhome:home=" + home + ";label=" + url.PathEscape(gkEd25519) + "?pin-value=" + url.PathEscape(gkPass)
	sg, err := signer.Open(ctx, uri)
	if err != nil {
		t.Fatalf("signer.Open: %v", err)
	}
	sig, err := sg.SignContext(ctx, msg)
	sg.Close()
	if err != nil || !infos[gkEd25519].GetPubKey().VerifyBytes(msg, sig) {
		t.Errorf("sign by URI: %v", err)
	}

	// Into a keybase directory, under a file name of one's choice.
	armor, err := st.ExportArmor(ctx, gkEd25519)
	if err != nil {
		t.Fatal(err)
	}
	ks, err := keybase.OpenStore(ctx, keybase.Config{Dir: filepath.Join(t.TempDir(), "keys"), Secret: signer.SecretBytes([]byte(gkPass))})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ks.ImportArmor(ctx, armor, gkEd25519); err != nil {
		t.Fatalf("keybase ImportArmor(%q): %v", gkEd25519, err)
	}
	listed, err := ks.ListKeys(ctx)
	if err != nil || len(listed) != 1 || listed[0].Label != gkEd25519 {
		t.Fatalf("keybase ListKeys: %v, %v; want %q", listed, err, gkEd25519)
	}
	ksg, err := ks.OpenKey(ctx, signer.KeyRef{Label: gkEd25519})
	if err != nil {
		t.Fatal(err)
	}
	sig, err = ksg.SignContext(ctx, msg)
	ksg.Close()
	if err != nil || !infos[gkEd25519].GetPubKey().VerifyBytes(msg, sig) {
		t.Errorf("keybase sign under %q: %v", gkEd25519, err)
	}
}

// TestGnokeyHomeLocked: while gno holds its key database open (as gnokey
// does while it writes), a read waits for the lock and, past its
// deadline, fails with a *gnokeyhome.LockedError; once gno closes the
// database, a read that was waiting gets through.
func TestGnokeyHomeLocked(t *testing.T) {
	home, _ := buildGnokeyHome(t)
	db, err := dbm.NewDB("keys", dbm.GoLevelDBBackend, filepath.Join(home, "data"))
	if err != nil {
		t.Fatal(err)
	}
	st, err := gnokeyhome.OpenStore(context.Background(), gnokeyhome.Config{Home: home})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	_, err = st.Keys(ctx)
	cancel()
	var le *gnokeyhome.LockedError
	if !errors.As(err, &le) || !errors.Is(err, signer.ErrBusy) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Keys while gno holds the database: %v, want a *LockedError", err)
	}
	// gno keeps working meanwhile: the read took no lock.
	if _, err := keys.NewDBKeybase(db).GetByName(gkValidator); err != nil {
		t.Errorf("gno's own read while ours waited: %v", err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := st.Keys(context.Background())
		done <- err
	}()
	time.Sleep(100 * time.Millisecond) // let it find the lock taken
	db.Close()
	if err := <-done; err != nil {
		t.Errorf("Keys once gno closed the database: %v", err)
	}
	// And ours holds no lock after it: gno opens the database again.
	kb, _ := keys.NewKeyBaseFromDir(home)
	if _, err := kb.GetByName(gkValidator); err != nil {
		t.Errorf("gno after our reads: %v", err)
	}
}

func keysFrom(t *testing.T, home string) keys.Keybase {
	kb, err := keys.NewKeyBaseFromDir(home)
	if err != nil {
		t.Fatal(err)
	}
	return kb
}

// samePub compares a public key read here with gno's.
func samePub(ours any, theirs gnocrypto.PubKey) bool {
	switch p := theirs.(type) {
	case gnoed25519.PubKeyEd25519:
		o, ok := ours.(ed25519.PublicKey)
		return ok && string(o) == string(p[:])
	case gnosecp256k1.PubKeySecp256k1:
		k, err := secp256k1.ParsePubKey(p[:])
		return err == nil && k.ToECDSA().Equal(ours)
	case multisig.PubKeyMultisigThreshold:
		m, ok := ours.(*gnokeyhome.Multisig)
		if !ok || m.Threshold != uint64(p.K) || len(m.Keys) != len(p.PubKeys) {
			return false
		}
		for i := range m.Keys {
			if !samePub(m.Keys[i], p.PubKeys[i]) {
				return false
			}
		}
		return true
	}
	return false
}

// copyDir copies the regular files of src into dst, created.
func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !e.Type().IsRegular() || e.Name() == "LOCK" || strings.HasPrefix(e.Name(), "LOG") {
			continue
		}
		in, err := os.Open(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out, err := os.Create(filepath.Join(dst, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(out, in); err != nil {
			t.Fatal(err)
		}
		in.Close()
		out.Close()
	}
}
