package testbin

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

const page = `# HELP signerkit_requests_total x
signerkit_requests_total{chain="c",phase="prevote",outcome="signed"} 7
signerkit_requests_total{chain="c",phase="precommit",outcome="signed"} 5
signerkit_requests_total{chain="c",phase="precommit",outcome="refused"} 1
signerkit_backend_up{backend="inprocess"} 1
`

func TestMetric(t *testing.T) {
	if v := Metric(page, "signerkit_requests_total", "phase", "precommit", "outcome", "refused"); v != 1 {
		t.Errorf("Metric = %v, want 1", v)
	}
	if v := Metric(page, "signerkit_requests_total", "phase", "proposal"); v != -1 {
		t.Errorf("Metric of a missing series = %v, want -1", v)
	}
	if v := SumMetric(page, "signerkit_requests_total"); v != 13 {
		t.Errorf("SumMetric = %v, want 13", v)
	}
}

func TestWALFiles(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"wal", "wal.001", "wal.000"} {
		if err := os.WriteFile(filepath.Join(dir, n), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	got := WALFiles(t, dir)
	want := []string{"wal.000", "wal.001", "wal"}
	if len(got) != len(want) {
		t.Fatalf("WALFiles = %v", got)
	}
	for i := range want {
		if filepath.Base(got[i]) != want[i] {
			t.Fatalf("WALFiles = %v, want %v", got, want)
		}
	}
}

func ExampleTail() {
	fmt.Println(Tail("signerkit started", 7))
	// Output: started
}
