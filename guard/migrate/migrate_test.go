package migrate

import (
	"bytes"
	"crypto/ed25519"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/signerkit/signerkit/signbytes"
)

// The files in testdata were written by the vendors' own code (the
// interop module's TestStateImport* and TestNodeStatusShapes): each
// signer's state after it signed height 20's precommit with the key of
// seed keySeed, and a new FilePV's state.
const testChain = "import-chain"

var keySeed = map[string]byte{
	"cometbft038_precommit.json": 31,
	"cometbft034_precommit.json": 32,
	"gno_precommit.json":         33,
	"horcrux_v3_precommit.json":  34,
	"horcrux_v2_precommit.json":  34,
}

func testPub(seed byte) ed25519.PublicKey {
	return ed25519.NewKeyFromSeed(bytes.Repeat([]byte{seed}, 32)).Public().(ed25519.PublicKey)
}

func readTestdata(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestParseVendorFiles(t *testing.T) {
	cases := []struct {
		file   string
		format Format
		step   int8
		signed bool
	}{
		{"cometbft038_precommit.json", CometBFT, 3, true},
		{"cometbft034_precommit.json", CometBFT, 3, true},
		{"gno_precommit.json", Gno, 3, true},
		{"horcrux_v3_precommit.json", Horcrux, 3, true},
		{"horcrux_v2_precommit.json", Horcrux, 3, true},
		{"tmkms_precommit.json", TMKMS, 3, false},
		{"cometbft038_fresh.json", CometBFT, 0, false},
		{"gno_fresh.json", Gno, 0, false},
	}
	for _, c := range cases {
		st, err := Parse(readTestdata(t, c.file))
		if err != nil {
			t.Fatalf("%s: %v", c.file, err)
		}
		if st.Format != c.format || st.Step != c.step || (st.SignBytes != nil) != c.signed {
			t.Fatalf("%s: %+v", c.file, st)
		}
		if !c.signed {
			continue
		}
		if st.Height != 20 || st.Round != 0 {
			t.Fatalf("%s: %v", c.file, st)
		}
		// The sign bytes are the chain's precommit, and the signature the
		// key's over them (crypto/ed25519, not this package, checks).
		m, err := signbytes.Parse(st.SignBytes)
		if err != nil || m.Phase != signbytes.Precommit || m.ChainID != testChain {
			t.Fatalf("%s: %v %v", c.file, m, err)
		}
		pub := testPub(keySeed[c.file])
		if !ed25519.Verify(pub, st.SignBytes, st.Signature) || st.Verify(pub) != nil {
			t.Fatalf("%s: the signature does not verify", c.file)
		}
		if err := st.Verify(testPub(1)); !errors.Is(err, ErrSignature) {
			t.Fatalf("%s: Verify under another key: %v", c.file, err)
		}
		next, exact, err := st.Resume(testChain)
		if err != nil || !exact || next.Height != 20 || next.Round != 0 || next.Step != 3 || !bytes.Equal(next.SignBytes, st.SignBytes) {
			t.Fatalf("%s: Resume %+v %v %v", c.file, next, exact, err)
		}
		var ce *ChainError
		if _, _, err := st.Resume("test11"); !errors.As(err, &ce) || ce.File != testChain {
			t.Fatalf("%s: Resume for another chain: %v", c.file, err)
		}
	}
}

// Without sign bytes the guard resumes at the step-0 state the file
// allows, or at the next round.
func TestResumeWithoutSignBytes(t *testing.T) {
	cases := []struct {
		in        string
		h, r      int64
		exact     bool
		fileStep  int8
		guardStep int8
	}{
		{`{"height":"0","round":0,"step":0}`, 0, 0, true, 0, 0},
		{`{"height":"500","round":"2","step":0}`, 500, 2, true, 0, 0},
		{`{"height":"500","round":"0","step":3}`, 500, 1, true, 3, 3},
		{`{"height":"500","round":2,"step":2}`, 500, 3, false, 2, 2},
		{`{"height":"500","round":"0","step":1}`, 500, 1, false, 1, 1},
		// tmkms numbers steps from 0: 2 is a precommit, 0 a proposal.
		{`{"height":"500","round":"4","step":2,"block_id":null}`, 500, 5, true, 2, 3},
		{`{"height":"500","round":"0","step":0,"block_id":{"hash":"","parts":{"total":0,"hash":""}}}`, 500, 1, false, 0, 1},
		{`{"height":"0","round":"0","step":0,"block_id":null}`, 0, 0, true, 0, 1},
	}
	for _, c := range cases {
		st, err := Parse([]byte(c.in))
		if err != nil {
			t.Fatalf("%s: %v", c.in, err)
		}
		if st.FileStep != c.fileStep || st.Step != c.guardStep {
			t.Fatalf("%s: steps %d/%d", c.in, st.FileStep, st.Step)
		}
		next, exact, err := st.Resume("c")
		if err != nil || next.Height != c.h || next.Round != c.r || next.Step != 0 || exact != c.exact || next.SignBytes != nil {
			t.Fatalf("%s: %+v exact %v %v", c.in, next, exact, err)
		}
	}
}

// Bad input is an *Error wrapping ErrNotState that names the field.
func TestParseErrors(t *testing.T) {
	good := string(readTestdata(t, "cometbft038_precommit.json"))
	sigLine := good[strings.Index(good, `"signature"`):]
	sigLine = sigLine[:strings.Index(sigLine, "\n")]
	cases := map[string]string{
		"":                                    "",
		"[]":                                  "",
		"null":                                "",
		`{"height":"1","round":0}`:            "step",
		`{"height":"-1","round":0,"step":0}`:  "height",
		`{"height":"1.5","round":0,"step":0}`: "height",
		`{"height":1,"round":0,"step":4}`:     "step",
		`{"height":1,"round":"x","step":0}`:   "round",
		`{"height":1,"round":3000000000,"step":0}`:                            "round",
		`{"height":1,"round":0,"step":3,"block_id":null}`:                     "step",
		`{"height":1,"round":0,"step":1,"block_id":{"hash":"zz"}}`:            "block_id",
		`{"height":1,"round":0,"step":1,"signature":"AAAA"}`:                  "signature",
		`{"height":1,"round":0,"step":1,"signbytes":"00"}`:                    "signbytes",
		`{"height":1,"round":0,"step":0,"signbytes":"00","signature":"AA=="}`: "signbytes",
		`{"height":1,"round":0,"step":0} {}`:                                  "",
		strings.Replace(good, `"height": "20"`, `"height": "21"`, 1):          "signbytes",
		strings.Replace(good, `"step": 3`, `"step": 2`, 1):                    "signbytes",
		strings.Replace(good, sigLine, `"signature": "not base64!",`, 1):      "signature",
		strings.Replace(good, `"signbytes": "70`, `"signbytes": "71`, 1):      "signbytes",
		strings.Repeat(" ", MaxFileSize+1):                                    "",
	}
	for in, field := range cases {
		_, err := Parse([]byte(in))
		var e *Error
		if !errors.As(err, &e) || !errors.Is(err, ErrNotState) || e.Field != field {
			t.Errorf("Parse(%.80q): %v, want an error on field %q", in, err, field)
		}
	}
}

func TestParseStatus(t *testing.T) {
	for name, want := range map[string]NodeStatus{
		"status_cometbft038.json": {Network: testChain, LatestHeight: 1234, CatchingUp: true},
		"status_gno.json":         {Network: "test11", LatestHeight: 98765},
	} {
		got, err := ParseStatus(readTestdata(t, name))
		if err != nil || got != want {
			t.Fatalf("%s: %+v %v", name, got, err)
		}
	}
	for _, in := range []string{"", "{}", `{"result":null,"error":{"code":-32603}}`,
		`{"result":{"node_info":{"network":"x"},"sync_info":{"latest_block_height":"-3"}}}`,
		`{"result":{"node_info":{"network":""},"sync_info":{"latest_block_height":"3"}}}`,
		`{"result":{"node_info":{"network":"x"},"sync_info":{"latest_block_height":"3","catching_up":"yes"}}}`} {
		if _, err := ParseStatus([]byte(in)); !errors.Is(err, ErrNotStatus) {
			t.Errorf("ParseStatus(%q): %v", in, err)
		}
	}
}

// A file without sign bytes names no chain; one with them names its own.
func TestCheckChain(t *testing.T) {
	st, err := Parse(readTestdata(t, "tmkms_precommit.json"))
	if err != nil || st.CheckChain("any-chain") != nil {
		t.Fatalf("%v", err)
	}
	st, err = Parse(readTestdata(t, "horcrux_v3_precommit.json"))
	if err != nil || st.CheckChain(testChain) != nil {
		t.Fatalf("%v", err)
	}
	var ce *ChainError
	if err := st.CheckChain("x"); !errors.As(err, &ce) || ce.Want != "x" || !strings.Contains(err.Error(), testChain) {
		t.Fatalf("%v", err)
	}
}
