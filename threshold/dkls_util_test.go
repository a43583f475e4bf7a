package threshold

import (
	"errors"
	"log/slog"
	"testing"

	"github.com/signerkit/signerkit/threshold/frost"
)

func fmtID(id int) frost.Identifier         { return frost.Identifier(id) }
func errorsAs(err error, target any) bool   { return errors.As(err, target) }
func errorsIs(err error, target error) bool { return errors.Is(err, target) }

type tWriter struct{ t testing.TB }

func (w tWriter) Write(p []byte) (int, error) { w.t.Log(string(p)); return len(p), nil }

func testLog(t testing.TB) *slog.Logger { return slog.New(slog.NewTextHandler(tWriter{t}, nil)) }
