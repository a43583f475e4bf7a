package report

import (
	"bufio"
	"fmt"
	"strings"

	"github.com/signerkit/signerkit/openpgpcard/cardsim"
)

// openpgpFindings are the keycard benchmark's findings per row
// (docs/latency-profiles.md §7), with the CPU row each is set against.
var openpgpFindings = []struct {
	row, cpu, finding string
}{
	{"openpgp-yubikey4-rsa2048", "raw-go-rsa2048-sign", "about 10× the CPU (a whole `gpg` decryption)"},
	{"openpgp-yubikey4-rsa4096", "raw-go-rsa4096-sign", "about 10× the YubiKey 4 at 2048 bits"},
	{"openpgp-yubikey-neo-rsa2048", "raw-go-rsa2048-sign", "as slow as the YubiKey 4 at 4096 bits"},
	{"openpgp-fst01-rsa2048", "raw-go-rsa2048-sign", "more than 1 s"},
	{"openpgp-fst01-rsa4096", "raw-go-rsa4096-sign", "about 8 s"},
	{"openpgp-fst01-ed25519", "raw-go-ed25519-sign", "none (assumed: a tenth of its RSA-2048)"},
	{"openpgp-nitrokey-start-rsa2048", "raw-go-rsa2048-sign", "none (Gnuk on the FST-01's chip)"},
	{"openpgp-nitrokey-pro-rsa2048", "raw-go-rsa2048-sign", "none (assumed: the NEO's)"},
	// The benchmark timed decryption: the decipher rows are what it measured.
	{"openpgp-yubikey4-rsa2048-decipher", "raw-go-rsa2048-decipher", "about 10× the CPU (a whole `gpg` decryption)"},
	{"openpgp-yubikey4-rsa4096-decipher", "raw-go-rsa4096-decipher", "about 10× the YubiKey 4 at 2048 bits"},
	{"openpgp-yubikey-neo-rsa2048-decipher", "raw-go-rsa2048-decipher", "as slow as the YubiKey 4 at 4096 bits"},
	{"openpgp-fst01-rsa2048-decipher", "raw-go-rsa2048-decipher", "more than 1 s"},
	{"openpgp-fst01-rsa4096-decipher", "raw-go-rsa4096-decipher", "about 8 s"},
}

// openpgpColumns are the columns of the table by card, operation and key
// size: each algorithm with the operations a card does with it.
var openpgpColumns = []struct{ alg, op string }{
	{"rsa2048", "sign"}, {"rsa2048", "decipher"},
	{"rsa4096", "sign"}, {"rsa4096", "decipher"},
	{"ed25519", "sign"}, {"ecdsa-p256", "sign"},
	{"ecdh-p256", "decipher"}, {"cv25519", "decipher"},
}

// openpgpRow names the row of card's alg for op: openpgp-<card>-<alg>
// signs, openpgp-<card>-<alg>-decipher deciphers; the CPU's are
// raw-go-<alg>-<op>.
func openpgpRow(card, alg, op string) string {
	if card == "" {
		return "raw-go-" + alg + "-" + op
	}
	name := "openpgp-" + card + "-" + alg
	if op == "decipher" {
		name += "-decipher"
	}
	return name
}

// writeOpenPGPTable writes the keycard benchmark's table shape: a line per
// card and one for Go's crypto on this host, a column per algorithm and
// operation, each cell the row's median (mean from bench output) at its
// smallest payload.
func (r *Report) writeOpenPGPTable(bw *bufio.Writer) {
	cards := []struct{ name, row string }{}
	for _, p := range cardsim.Profiles() {
		cards = append(cards, struct{ name, row string }{p.Short(), p.Short()})
	}
	cards = append(cards, struct{ name, row string }{"CPU (Go's crypto, this host)", ""})
	var lines []string
	for _, c := range cards {
		cells, found := make([]string, len(openpgpColumns)), false
		for i, col := range openpgpColumns {
			cells[i] = "—"
			if row, ok := r.smallest(openpgpRow(c.row, col.alg, col.op)); ok {
				cells[i], found = fmtMs(e2eMs(row)), true
			}
		}
		if found {
			lines = append(lines, fmt.Sprintf("| %s | %s |\n", c.name, strings.Join(cells, " | ")))
		}
	}
	if len(lines) < 2 {
		return
	}
	head := make([]string, len(openpgpColumns))
	for i, col := range openpgpColumns {
		head[i] = col.alg + " " + col.op
	}
	fmt.Fprintf(bw, "\n### By card, operation and key size\n\n"+
		"The benchmark's table shape, ms per operation: sign rows `openpgp-<card>-<alg>` (VERIFY and PSO:CDS, the card's PW1 status byte 00), decipher rows `openpgp-<card>-<alg>-decipher` (PSO:DECIPHER), "+
		"and on the last line the same private-key operations by Go's crypto on this host (`raw-go-<alg>-<op>`). A dash is an algorithm the card does not take, or a row not in this report.\n\n"+
		"| card | %s |\n|---|%s\n%s", strings.Join(head, " | "), strings.Repeat("---|", len(head)), strings.Join(lines, ""))
}

// smallest returns the row of backend at its smallest payload, if any.
func (r *Report) smallest(backend string) (Row, bool) {
	var best Row
	found := false
	for _, row := range r.Rows {
		if row.Backend == backend && (!found || row.Payload < best.Payload) {
			best, found = row, true
		}
	}
	return best, found
}

func e2eMs(r Row) float64 {
	if r.HasDist() {
		return r.E2E.P50
	}
	return r.E2E.Avg
}

// writeOpenPGP writes the keycard benchmark's findings beside the
// openpgp-* rows and the CPU rows they are compared with, when the report
// has them.
func (r *Report) writeOpenPGP(bw *bufio.Writer) {
	var lines []string
	for _, f := range openpgpFindings {
		card, ok := r.smallest(f.row)
		if !ok {
			continue
		}
		cpuCell, ratio := "not in this report", "—"
		if cpu, ok := r.smallest(f.cpu); ok && e2eMs(cpu) > 0 {
			cpuCell = fmt.Sprintf("%s: %s", f.cpu, fmtMs(e2eMs(cpu)))
			ratio = fmt.Sprintf("%.0f×", e2eMs(card)/e2eMs(cpu))
		}
		lines = append(lines, fmt.Sprintf("| %s | %s | %s | %s | %s |\n", f.row, f.finding, fmtMs(e2eMs(card)), cpuCell, ratio))
	}
	if len(lines) == 0 {
		return
	}
	fmt.Fprintf(bw, "\n## OpenPGP cards beside the CPU\n\n"+
		"The keycard benchmark's findings ([docs/latency-profiles.md §7](../latency-profiles.md#7-openpgp-cards)) beside the `openpgp-*` rows (package `openpgpcard` on `cardsim`, the card's time modeled) "+
		"and the CPU rows of the same algorithm. The benchmark timed whole `gpg` processes; the CPU rows time the bare operation, so the ratios here are larger than its \"10×\". "+
		"[docs/openpgpcard.md](../openpgpcard.md) has the method.\n\n"+
		"| row | the benchmark's finding | ours, ms | CPU row, ms | card ÷ CPU |\n|---|---|---|---|---|\n%s", strings.Join(lines, ""))
	r.writeOpenPGPTable(bw)
}
