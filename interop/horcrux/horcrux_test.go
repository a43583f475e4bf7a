package horcrux

import (
	"crypto/ed25519"
	"crypto/sha256"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	cmted25519 "github.com/cometbft/cometbft/crypto/ed25519"
	"github.com/cometbft/cometbft/privval"
	cmtproto "github.com/cometbft/cometbft/proto/tendermint/types"
	cmttypes "github.com/cometbft/cometbft/types"
	hsigner "github.com/strangelove-ventures/horcrux/v3/signer"

	"github.com/signerkit/signerkit/guard/migrate"
)

const chainID = "horcrux-chain"

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// signerkitBin builds cmd/signerkit from the main module once.
func signerkitBin(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "signerkit-horcrux-bin-")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "signerkit")
		cmd := exec.Command("go", "build", "-o", binPath, "./cmd/signerkit")
		cmd.Dir = filepath.Join("..", "..")
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build ./cmd/signerkit: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

func run(t *testing.T, args ...string) (string, error) {
	t.Helper()
	out, err := exec.Command(signerkitBin(t), args...).CombinedOutput()
	return string(out), err
}

// precommit makes height h's precommit for a block, signed by CometBFT's
// FilePV (a key horcrux's shards would have been made from), and returns
// its sign bytes and signature.
func precommit(t *testing.T, pv *privval.FilePV, h int64) (signBytes, sig []byte) {
	t.Helper()
	hash := sha256.Sum256([]byte(fmt.Sprint("block ", h)))
	parts := sha256.Sum256([]byte(fmt.Sprint("parts ", h)))
	v := &cmtproto.Vote{
		Type:             cmtproto.PrecommitType,
		Height:           h,
		BlockID:          cmtproto.BlockID{Hash: hash[:], PartSetHeader: cmtproto.PartSetHeader{Total: 1, Hash: parts[:]}},
		Timestamp:        time.Date(2026, 12, 6, 0, 0, 0, 0, time.UTC),
		ValidatorAddress: pv.Key.Address,
	}
	if err := pv.SignVote(chainID, v); err != nil {
		t.Fatal(err)
	}
	return cmttypes.VoteSignBytes(chainID, v), v.Signature
}

// horcruxState writes a state file with horcrux's own SignState code, as
// a cosigner does after signing: LoadOrCreateSignState, then Save.
func horcruxState(t *testing.T, path string, h int64, signBytes, sig []byte) []byte {
	t.Helper()
	ss, err := hsigner.LoadOrCreateSignState(path)
	if err != nil {
		t.Fatal(err)
	}
	ssc := hsigner.SignStateConsensus{Height: h, Round: 0, Step: 3, Signature: sig, SignBytes: signBytes}
	if err := ss.Save(ssc, nil); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestHorcruxStateImport: a <chain-id>_priv_validator_state.json written by
// horcrux v3's SignState parses as horcrux's format, with its height, round,
// step, sign bytes and a signature verifying under the key; `signerkit state
// import` takes it, after which the chain signs only after that precommit.
func TestHorcruxStateImport(t *testing.T) {
	dir := t.TempDir()
	keyFile := filepath.Join(dir, "priv_validator_key.json")
	pv := privval.GenFilePV(keyFile, filepath.Join(dir, "filepv_state.json"))
	pv.Key.Save()
	pub := ed25519.PublicKey(pv.Key.PubKey.(cmted25519.PubKey))
	sb19, sig19 := precommit(t, pv, 19) // a cosigner that fell behind
	sb, sig := precommit(t, pv, 20)
	from := filepath.Join(dir, chainID+"_priv_validator_state.json")
	b := horcruxState(t, from, 20, sb, sig)
	t.Logf("horcrux wrote:\n%s", b)

	st, err := migrate.Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	if st.Format != migrate.Horcrux || st.Height != 20 || st.Round != 0 || st.Step != 3 || string(st.SignBytes) != string(sb) {
		t.Fatalf("parsed %+v", st)
	}
	if err := st.Verify(pub); err != nil {
		t.Fatalf("the signature horcrux kept: %v", err)
	}

	home := filepath.Join(dir, "signerkit")
	keyURI := "inprocess:file=" + filepath.Join(home, "validator.pem")
	if out, err := run(t, "init", "-home", home, "-chain", chainID, "-key", keyURI, "-validator", "unix://"+filepath.Join(dir, "pv.sock")); err != nil {
		t.Fatalf("init: %v\n%s", err, out)
	}
	if out, err := run(t, "keys", "import", "-from", keyFile, "-to", keyURI); err != nil {
		t.Fatalf("keys import: %v\n%s", err, out)
	}
	cfg := filepath.Join(home, "signerkit.toml")
	out, err := run(t, "state", "import", "-config", cfg, "-from", from)
	if err != nil || !strings.Contains(out, "imported the horcrux state: last signed 20/0/precommit") {
		t.Fatalf("state import: %v\n%s", err, out)
	}
	t.Logf("state import:\n%s", out)
	// Importing it again is harmless (the same state); a cosigner's
	// older file is refused, changing nothing.
	if out, err := run(t, "state", "import", "-config", cfg, "-from", from); err != nil {
		t.Fatalf("state import again: %v\n%s", err, out)
	}
	older := filepath.Join(dir, "cosigner2", chainID+"_priv_validator_state.json")
	if err := os.Mkdir(filepath.Dir(older), 0o700); err != nil {
		t.Fatal(err)
	}
	horcruxState(t, older, 19, sb19, sig19)
	if out, err := run(t, "state", "import", "-config", cfg, "-from", older); err == nil || !strings.Contains(out, "already holds 20/0/precommit") {
		t.Fatalf("state import of an older cosigner's file: %v\n%s", err, out)
	}
}

// TestHorcruxShareStateRefused: horcrux's <chain-id>_share_sign_state.json
// has the same layout, but its signature is a cosigner's share, which does
// not verify under the validator's key: import refuses it and changes
// nothing, as docs/migrate.md says. The share here is horcrux's own: a
// threshold signer's partial signature is not a signature of the key, so
// any other key's signature stands for it.
func TestHorcruxShareStateRefused(t *testing.T) {
	dir := t.TempDir()
	keyFile := filepath.Join(dir, "priv_validator_key.json")
	pv := privval.GenFilePV(keyFile, filepath.Join(dir, "filepv_state.json"))
	pv.Key.Save()
	other := privval.GenFilePV(filepath.Join(dir, "other_key.json"), filepath.Join(dir, "other_state.json"))
	sb, share := precommit(t, other, 20)
	from := filepath.Join(dir, chainID+"_share_sign_state.json")
	horcruxState(t, from, 20, sb, share)

	home := filepath.Join(dir, "signerkit")
	keyURI := "inprocess:file=" + filepath.Join(home, "validator.pem")
	if out, err := run(t, "init", "-home", home, "-chain", chainID, "-key", keyURI, "-validator", "unix://"+filepath.Join(dir, "pv.sock")); err != nil {
		t.Fatalf("init: %v\n%s", err, out)
	}
	if out, err := run(t, "keys", "import", "-from", keyFile, "-to", keyURI); err != nil {
		t.Fatalf("keys import: %v\n%s", err, out)
	}
	cfg := filepath.Join(home, "signerkit.toml")
	out, err := run(t, "state", "import", "-config", cfg, "-from", from)
	if err == nil || !strings.Contains(out, "does not verify") {
		t.Fatalf("state import of a share state: %v\n%s", err, out)
	}
	out, err = run(t, "state", "show", "-config", cfg)
	if err != nil {
		t.Fatalf("state show after the refused import: %v\n%s", err, out)
	}
	if strings.Contains(out, "20/0") {
		t.Fatalf("the refused import changed the state:\n%s", out)
	}
}
