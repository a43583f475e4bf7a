package report

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
)

// WriteDir writes report.md, latency-payload.svg and stages.svg into dir,
// creating it. Each file is written whole to a temporary name and renamed,
// so a failed run leaves the previous report intact.
func (r *Report) WriteDir(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	for _, f := range []struct {
		name  string
		write func(*bytes.Buffer) error
	}{
		{MarkdownFile, func(b *bytes.Buffer) error { return r.WriteMarkdown(b) }},
		{PayloadSVG, func(b *bytes.Buffer) error { return r.WritePayloadSVG(b) }},
		{StagesSVG, func(b *bytes.Buffer) error { return r.WriteStagesSVG(b) }},
	} {
		var b bytes.Buffer
		if err := f.write(&b); err != nil {
			return fmt.Errorf("report: %s: %w", f.name, err)
		}
		tmp, err := os.CreateTemp(dir, "."+f.name+".*")
		if err != nil {
			return fmt.Errorf("report: %w", err)
		}
		_, werr := tmp.Write(b.Bytes())
		cerr := tmp.Close()
		if werr == nil {
			werr = cerr
		}
		if werr == nil {
			werr = os.Chmod(tmp.Name(), 0o644)
		}
		if werr == nil {
			werr = os.Rename(tmp.Name(), filepath.Join(dir, f.name))
		}
		if werr != nil {
			os.Remove(tmp.Name())
			return fmt.Errorf("report: %s: %w", f.name, werr)
		}
	}
	return nil
}
