package ledgersim

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/signerkit/signerkit/internal/simtime"
	"github.com/signerkit/signerkit/ledger/internal/specext"
	"github.com/signerkit/signerkit/ledger/internal/speculos"
	"github.com/signerkit/signerkit/signer/signertrace"
)

// FuzzSpeculosReply reads arbitrary bytes as a Speculos reply, as
// SpeculosDialer's client does, with signerkit's extension frames.
func FuzzSpeculosReply(f *testing.F) {
	f.Add([]byte{0, 0, 0, 0, 0x90, 0x00})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff})
	stages := []signertrace.StageInfo{
		{Stage: signertrace.StageWire, Duration: 3 * time.Millisecond, Source: signertrace.Modeled, Profile: "nanosplus"},
		{Stage: signertrace.StageDevice, Duration: 526 * time.Millisecond, Source: signertrace.Modeled, Profile: "nanosplus"},
	}
	f.Add(append(specext.AppendReply(nil, false, 0, stages), 0, 0, 0, 0, 0x90, 0x00))
	f.Add(specext.AppendReply(nil, true, 529*time.Millisecond, stages[:1]))
	f.Fuzz(func(t *testing.T, b []byte) {
		ctx := signertrace.WithTrace(context.Background(), &signertrace.Trace{StageDone: func(s signertrace.StageInfo) {
			if s.Source != signertrace.Modeled || s.Duration < 0 || s.Duration > simtime.MaxStageDuration {
				t.Fatalf("stage %+v from %x", s, b)
			}
		}})
		resp, answer, err := speculos.ReadReply(ctx, bytes.NewReader(b), timeExtension{})
		switch {
		case err != nil:
		case answer != nil:
			if resp != nil {
				t.Fatalf("a reply with a deadline frame, from %x", b)
			}
		case len(resp) < 2:
			t.Fatalf("reply %x from %x", resp, b)
		}
	})
}
