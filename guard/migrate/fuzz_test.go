package migrate

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/signerkit/signerkit/signbytes"
)

func addTestdata(f *testing.F, prefix string) {
	names, err := filepath.Glob(filepath.Join("testdata", prefix+"*.json"))
	if err != nil || len(names) == 0 {
		f.Fatalf("no seed files: %v", err)
	}
	for _, n := range names {
		b, err := os.ReadFile(n)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
}

// FuzzParse: Parse never panics; a state it accepts is consistent (its
// sign bytes, if any, are the message at its height, round and step), and
// Resume either fails with a typed error or gives a state the guard
// takes, never below the file's.
func FuzzParse(f *testing.F) {
	for _, p := range []string{"cometbft", "gno", "horcrux", "tmkms"} {
		addTestdata(f, p)
	}
	f.Add([]byte(`{"height":"9223372036854775807","round":"2147483647","step":2}`))
	f.Add([]byte(`{"height":1,"round":0,"step":1,"block_id":{"hash":""}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		st, err := Parse(b)
		if err != nil {
			if _, ok := err.(*Error); !ok {
				t.Fatalf("untyped error %T %v", err, err)
			}
			return
		}
		if st.Height < 0 || st.Round < 0 || st.Step < 0 || st.Step > 3 {
			t.Fatalf("out of range: %+v", st)
		}
		if st.SignBytes != nil {
			m, err := signbytes.Parse(st.SignBytes)
			if err != nil || m.Height != st.Height || m.Round != st.Round || m.Step() != st.Step || len(st.Signature) == 0 {
				t.Fatalf("inconsistent: %+v %v", st, err)
			}
		}
		next, _, err := st.Resume(testChain)
		if err != nil {
			return
		}
		if next.Height != st.Height || next.Round < st.Round {
			t.Fatalf("Resume %+v below the file's %+v", next, st)
		}
		if (next.Step == 0) != (next.SignBytes == nil) || !bytes.Equal(next.SignBytes, st.SignBytes) && next.SignBytes != nil {
			t.Fatalf("Resume %+v of %+v", next, st)
		}
	})
}

// FuzzParseStatus: ParseStatus never panics, and what it accepts has a
// network and a height.
func FuzzParseStatus(f *testing.F) {
	addTestdata(f, "status_")
	f.Fuzz(func(t *testing.T, b []byte) {
		st, err := ParseStatus(b)
		if err == nil && (st.Network == "" || st.LatestHeight < 0) {
			t.Fatalf("accepted %+v", st)
		}
	})
}
