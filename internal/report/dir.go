package report

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/signerkit/signerkit/internal/atomicfile"
)

// WriteDir writes report.md, latency-payload.svg and stages.svg into dir,
// creating it, and threshold-latency.svg when the report has threshold rows
// it plots; without them it removes a threshold-latency.svg an earlier run
// left, which report.md would no longer describe. Each file is written
// with atomicfile.WriteFile (mode 0644): whole to a temporary name, synced
// and renamed, so a failed run leaves the previous report intact.
func (r *Report) WriteDir(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	type file struct {
		name  string
		write func(*bytes.Buffer) error
	}
	files := []file{
		{MarkdownFile, func(b *bytes.Buffer) error { return r.WriteMarkdown(b) }},
		{PayloadSVG, func(b *bytes.Buffer) error { return r.WritePayloadSVG(b) }},
		{StagesSVG, func(b *bytes.Buffer) error { return r.WriteStagesSVG(b) }},
	}
	if r.hasThresholdChart() {
		files = append(files, file{ThresholdSVG, func(b *bytes.Buffer) error { return r.WriteThresholdSVG(b) }})
	}
	for _, f := range files {
		var b bytes.Buffer
		if err := f.write(&b); err != nil {
			return fmt.Errorf("report: %s: %w", f.name, err)
		}
		if err := atomicfile.WriteFile(filepath.Join(dir, f.name), b.Bytes(), atomicfile.Options{Perm: 0o644}); err != nil {
			return fmt.Errorf("report: %s: %w", f.name, err)
		}
	}
	if !r.hasThresholdChart() {
		if err := os.Remove(filepath.Join(dir, ThresholdSVG)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("report: %w", err)
		}
	}
	return nil
}

// Files returns the names of the files WriteDir writes, in its order.
func (r *Report) Files() []string {
	names := []string{MarkdownFile, PayloadSVG, StagesSVG}
	if r.hasThresholdChart() {
		names = append(names, ThresholdSVG)
	}
	return names
}
