package bench

import (
	"context"
	"os"
	"strings"
	"time"

	"github.com/signerkit/signerkit/ledger"
	"github.com/signerkit/signerkit/ledger/ledgergo"
	"github.com/signerkit/signerkit/ledger/ledgersim"
	"github.com/signerkit/signerkit/signbytes/signbytestest"
	"github.com/signerkit/signerkit/signer"
)

// The Ledger rows. Without SIGNERKIT_LEDGER they run against ledgersim's
// Nano S Plus (docs/latency-profiles.md §1), time accounted unless
// SIGNERKIT_SIM=realtime:
//
//   - ledger-hid: our HID framing (ledger.HIDTransport) over the
//     simulator's 64-byte report face, no stall;
//   - ledger-ledgergo: the upstream transport. zondax/ledger-go's
//     LedgerDeviceHID needs a USB device, so on the simulator this row is
//     our framing with ledger-go's 50 ms per-APDU stall modeled
//     (ledgersim.UpstreamStall); with SIGNERKIT_LEDGER set it is the real
//     LedgerDeviceHID (ledgergo.Dialer);
//   - ledger-hid-raw, ledger-ledgergo-raw: the same over the 32–1024 B
//     table, against the simulator's raw mode, which signs any bytes — NOT
//     the validator app, which signs only votes of at most 128 B. Always
//     simulated.
//   - ledger-speculos: Speculos at SIGNERKIT_SPECULOS=host:port.
//
// The validator rows sign tm2 sign bytes at rising heights (a nil prevote
// of 34 B, a prevote of 108, a precommit of 117, a proposal of 128).
// SIGNERKIT_LEDGER=hid uses the first Ledger found; any other value is a
// HID device path.

// LedgerEnv and SpeculosEnv opt real devices in.
const (
	LedgerEnv   = "SIGNERKIT_LEDGER"
	SpeculosEnv = "SIGNERKIT_SPECULOS"
)

var (
	ledgerPayloads = []int{34, 108, 117, 128}
	ledgerChunks   = []int{32, 64, 128, 250}
	// Heights rise across every row and run, above what a real device's
	// app may have signed in an earlier run.
	ledgerHeights = signbytestest.NewHeights("", time.Now().Unix()*1000)
)

func init() {
	Register(Backend{Name: "ledger-hid", Algorithm: signer.Ed25519, Validator: true, Payloads: ledgerPayloads, Chunks: ledgerChunks,
		Messages: voteMessages, Traced: true, Open: openLedger(false, false)})
	Register(Backend{Name: "ledger-ledgergo", Algorithm: signer.Ed25519, Validator: true, Payloads: ledgerPayloads, Chunks: ledgerChunks,
		Messages: voteMessages, Traced: true, Open: openLedger(true, false)})
	Register(Backend{Name: "ledger-hid-raw", Algorithm: signer.Ed25519, Chunks: ledgerChunks,
		Traced: true, Open: openLedger(false, true)})
	Register(Backend{Name: "ledger-ledgergo-raw", Algorithm: signer.Ed25519, Chunks: ledgerChunks,
		Traced: true, Open: openLedger(true, true)})
	Register(Backend{Name: "ledger-speculos", Algorithm: signer.Ed25519, Validator: true, Payloads: ledgerPayloads, Chunks: []int{32, 250},
		Messages: voteMessages, Traced: true,
		Skip: func() string {
			if os.Getenv(SpeculosEnv) == "" {
				return SpeculosEnv + "=host:port is not set: no Speculos to run the validator app against"
			}
			return ""
		},
		Open: func(ctx context.Context, p Params) (*Instance, error) {
			return openLedgerSigner(ctx, ledger.Config{Dial: ledger.SpeculosDialer(os.Getenv(SpeculosEnv))}, p)
		}})
}

// voteMessages returns sign bytes of the kind whose size is size, at
// rising heights.
func voteMessages(size int) func() []byte {
	kind, ok := signbytestest.KindOfSize(size)
	if !ok {
		return func() []byte { return ledgerHeights.OfSize(size) }
	}
	return func() []byte { return ledgerHeights.Next(kind) }
}

func openLedger(upstream, raw bool) func(context.Context, Params) (*Instance, error) {
	return func(ctx context.Context, p Params) (*Instance, error) {
		env := os.Getenv(LedgerEnv)
		switch {
		case env != "" && !raw && upstream:
			return openLedgerSigner(ctx, ledger.Config{Dial: ledgergo.Dialer(0)}, p)
		case env != "" && !raw:
			return openLedgerSigner(ctx, ledger.Config{Path: ledgerPath(env)}, p)
		}
		dev, err := ledgersim.New(ledgersim.Config{Raw: raw})
		if err != nil {
			return nil, err
		}
		dial := dev.HIDDialer()
		if upstream {
			dial = dev.UpstreamDialer(dial)
		}
		cfg := ledger.Config{Dial: dial}
		if raw {
			// The raw device signs any bytes: lift the client's refusal of
			// sign bytes longer than the validator app takes.
			cfg.MaxMessage = ledger.NoMessageLimit
		}
		return openLedgerSigner(ctx, cfg, p)
	}
}

// openLedgerSigner opens the validator app as cfg says, at the row's
// chunk size.
func openLedgerSigner(ctx context.Context, cfg ledger.Config, p Params) (*Instance, error) {
	cfg.ChunkSize = p.Chunk
	s, err := ledger.Open(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return FromSigner(s), nil
}

// ledgerPath turns SIGNERKIT_LEDGER into a device path: "hid" means the
// first Ledger found, as in the ledger package's tests.
func ledgerPath(env string) string {
	if strings.EqualFold(env, "hid") {
		return ""
	}
	return env
}
