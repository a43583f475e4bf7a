package report

import (
	"bytes"
	"encoding/xml"
	"io"
	"slices"
	"strings"
	"testing"
)

// manyPathsReport has the backends of a real run: seven families, 16
// ledger paths, more series than any one palette.
func manyPathsReport() *Report {
	var rows []Row
	add := func(backend string, chunk int) {
		for i, pl := range []int{32, 108, 128, 1024} {
			rows = append(rows, Row{Backend: backend, Payload: pl, Chunk: chunk, Source: "bench", E2E: Dist{Avg: float64(len(rows)+1) * float64(i+1) * 0.01}})
		}
	}
	for _, b := range []string{"inprocess-ed25519", "inprocess-ed25519-traced", "inprocess-p256", "inprocess-p384",
		"inprocess-rsa2048-pkcs1v15", "inprocess-rsa2048-pss", "inprocess-secp256k1", "keybase-persign-ed25519", "keybase-unlocked-ed25519"} {
		add(b, 0)
	}
	for _, b := range []string{"ledger-hid", "ledger-hid-raw", "ledger-ledgergo", "ledger-ledgergo-raw"} {
		for _, c := range []int{32, 64, 128, 250} {
			add(b, c)
		}
	}
	for _, b := range []string{"pkcs11-softhsm-ed25519", "pkcs11-softhsm-p256", "privval-cometbft-tcp", "privval-cometbft-unix",
		"privval-native-tcp", "privval-native-unix", "privval-cometbft-tcp-durable", "privval-cometbft-unix-durable",
		"privval-native-tcp-durable", "privval-native-unix-durable", "privval-extra-1", "privval-extra-2",
		"raw-ed25519", "raw-socket-tcp", "yubihsm-ed25519", "yubihsm-p256"} {
		add(b, 0)
	}
	return &Report{Rows: rows}
}

type svgPanel struct {
	family  string
	series  []string
	colours map[string]string // series → stroke
	labels  []string          // data-series of the panel's labels
}

// svgPanels parses a payload chart, failing on malformed XML, into its
// panels.
func svgPanels(t *testing.T, data []byte) []*svgPanel {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(data))
	var panels []*svgPanel
	var cur *svgPanel
	depth, panelDepth := 0, -1
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("SVG is not well-formed XML: %v", err)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			depth++
			attr := map[string]string{}
			for _, a := range tok.Attr {
				attr[a.Name.Local] = a.Value
			}
			if tok.Name.Local != "g" {
				continue
			}
			switch attr["class"] {
			case "panel":
				cur = &svgPanel{family: attr["data-family"], colours: map[string]string{}}
				panels = append(panels, cur)
				panelDepth = depth
			case "series":
				if cur == nil {
					t.Fatalf("series %q outside any panel", attr["data-series"])
				}
				cur.series = append(cur.series, attr["data-series"])
				cur.colours[attr["data-series"]] = attr["stroke"]
			case "label":
				if cur != nil {
					cur.labels = append(cur.labels, attr["data-series"])
				}
			}
		case xml.EndElement:
			if depth == panelDepth {
				cur, panelDepth = nil, -1
			}
			depth--
		}
	}
	return panels
}

func TestPayloadSVGPanels(t *testing.T) {
	for name, rep := range map[string]*Report{"fixture": fixtureReport(t), "many": manyPathsReport()} {
		var b bytes.Buffer
		if err := rep.WritePayloadSVG(&b); err != nil {
			t.Fatal(err)
		}
		panels := svgPanels(t, b.Bytes())
		var fams []string
		for _, pn := range panels {
			fams = append(fams, pn.family)
		}
		if want := rep.Families(); !slices.Equal(fams, want) {
			t.Errorf("%s: panels %q, want one per family %q", name, fams, want)
		}
		for _, pn := range panels {
			seen := map[string]string{}
			for _, s := range pn.series {
				if Family(strings.Fields(s)[0]) != pn.family {
					t.Errorf("%s: series %q in panel %q", name, s, pn.family)
				}
				c := pn.colours[s]
				if c == "" {
					t.Errorf("%s: series %q has no colour", name, s)
				}
				if other, dup := seen[c]; dup {
					t.Errorf("%s: panel %q: %q and %q share colour %s", name, pn.family, other, s, c)
				}
				seen[c] = s
			}
			if !slices.Equal(slices.Sorted(slices.Values(pn.labels)), slices.Sorted(slices.Values(pn.series))) {
				t.Errorf("%s: panel %q labels %q, series %q", name, pn.family, pn.labels, pn.series)
			}
		}
		if name == "many" && len(panels) != 7 {
			t.Errorf("many: %d panels, want 7", len(panels))
		}
	}
}
