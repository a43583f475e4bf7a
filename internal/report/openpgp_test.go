package report

import (
	"bufio"
	"strings"
	"testing"
)

func TestWriteOpenPGP(t *testing.T) {
	r := &Report{Rows: []Row{
		{Backend: "openpgp-yubikey4-rsa2048", Payload: 64, E2E: Dist{Avg: 300}},
		{Backend: "openpgp-yubikey4-rsa2048", Payload: 32, E2E: Dist{Avg: 204}},
		{Backend: "raw-go-rsa2048-sign", Payload: 32, E2E: Dist{Avg: 0.8}},
		{Backend: "openpgp-fst01-rsa4096", Payload: 32, E2E: Dist{Avg: 8004}},
	}}
	var b strings.Builder
	bw := bufio.NewWriter(&b)
	r.writeOpenPGP(bw)
	bw.Flush()
	out := b.String()
	for _, want := range []string{"## OpenPGP cards beside the CPU", "| openpgp-yubikey4-rsa2048 | about 10× the CPU", "| 255× |", "| openpgp-fst01-rsa4096 | about 8 s |", "not in this report"} {
		if !strings.Contains(out, want) {
			t.Errorf("section lacks %q:\n%s", want, out)
		}
	}
	b.Reset()
	(&Report{Rows: []Row{{Backend: "inprocess-ed25519", Payload: 32}}}).writeOpenPGP(bw)
	bw.Flush()
	if b.Len() != 0 {
		t.Errorf("a report without openpgp rows got a section:\n%s", b.String())
	}
}

func TestWriteOpenPGPTable(t *testing.T) {
	r := &Report{Rows: []Row{
		{Backend: "openpgp-yubikey4-rsa2048", Payload: 32, E2E: Dist{Avg: 204}},
		{Backend: "openpgp-yubikey4-rsa2048-decipher", Payload: 32, E2E: Dist{Avg: 202}},
		{Backend: "openpgp-yubikey4-rsa2048-decipher", Payload: 245, E2E: Dist{Avg: 999}},
		{Backend: "openpgp-fst01-cv25519-decipher", Payload: 32, E2E: Dist{Avg: 112}},
		{Backend: "raw-go-rsa2048-sign", Payload: 32, E2E: Dist{Avg: 0.83}},
		{Backend: "raw-go-rsa2048-decipher", Payload: 32, E2E: Dist{Avg: 0.67}},
	}}
	var b strings.Builder
	bw := bufio.NewWriter(&b)
	r.writeOpenPGPTable(bw)
	bw.Flush()
	out := b.String()
	for _, want := range []string{
		"| card | rsa2048 sign | rsa2048 decipher | rsa4096 sign |",
		"| yubikey4 | 204.0 | 202.0 | — |",
		"| fst01 | — | — | — | — | — | — | — | 112.0 |",
		"| CPU (Go's crypto, this host) | 0.830 | 0.670 | — |",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "999") || strings.Contains(out, "| yubikey-neo |") {
		t.Errorf("table shows a larger payload or a card without rows:\n%s", out)
	}
}
