// Package bench is the registry of the benchmark suite: every signer path
// that the root BenchmarkSign measures (and that cmd tools may run) is a
// Backend registered here, one file per backend package, so that adding a
// backend adds a file and never edits a switch.
package bench

import (
	"context"
	"crypto"
	"crypto/rand"
	"fmt"
	"sync"

	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/signer/signertest"
	"github.com/signerkit/signerkit/signer/signertrace"
)

// Payloads are the message sizes, in bytes, of the benchmark table.
var Payloads = []int{32, 64, 128, 256, 512, 1024}

// LargePayloads are Payloads and 1 MiB: the sizes of the rows that sign or
// verify in this process (raw-ed25519, inprocess-*, every VerifyCase),
// where a message of any size costs only host time, so that a row shows
// what hashing the message adds at each size. The full-slice expression
// gives append a fresh array: Payloads is not aliased.
//
// The other rows keep Payloads or their own sizes, on purpose:
//
//   - ledger-*: the validator app signs tm2 votes of at most 128 B; the raw
//     rows chunk the message into APDUs, and a 1 MiB message would be some
//     4,000 APDUs of modeled device time per sign;
//   - yubihsm-*: a YubiHSM 2 signs Ed25519 messages of at most 3,114 B
//     (yubihsm.MaxEd25519Message), what fits its command buffer, so a
//     1 MiB message cannot be signed on one;
//   - pkcs11-*: the SoftHSM2 rows keep the table of the real-token row
//     they stand beside, and a token takes an Ed25519 message whole in one
//     C_Sign, which a hardware token's buffer bounds; what hashing 1 MiB
//     costs the host, the in-process rows show;
//   - keybase-*: the rows measure unlocking a key file (a bcrypt per sign
//     in keybase-persign), which does not depend on the message; the sign
//     inside is inprocess-ed25519's, whose 1 MiB row already exists;
//   - privval-*, raw-socket-*: vote-sized sign bytes, as the protocols
//     carry.
var LargePayloads = append(Payloads[:len(Payloads):len(Payloads)], 1<<20)

// Params selects one row of a backend's table.
type Params struct {
	Payload int // message size in bytes
	Chunk   int // APDU chunk size in bytes; 0 for backends without chunks
}

// Instance is a backend opened for one row.
type Instance struct {
	// Sign signs msg as signer.Signer.SignContext does. For a backend row
	// it is the signer's SignContext method value; for a baseline row
	// (raw-…) it calls the underlying primitive directly.
	Sign func(ctx context.Context, msg []byte) ([]byte, error)
	// Public is the public key that signatures verify under.
	Public crypto.PublicKey
	// Close releases the instance; may be nil.
	Close func() error
	// Algorithm is what Sign produces when the backend's Algorithm is left
	// zero (a key known only once opened); FromSigner sets it.
	Algorithm signer.Algorithm
	// Metrics, when set, returns running totals of quantities the row
	// measures itself, keyed by unit without "/op" ("added-ms", "fsync").
	// Sign reads it just before and just after the timed loop and reports
	// each difference divided by the number of signs as <key>/op. Nil
	// reports nothing more.
	Metrics func() map[string]float64
	// Check, when set, checks what Sign returned for msg in place of a
	// signature verification: a row whose operation is not a signature
	// (an OpenPGP card's PSO:DECIPHER) checks its output against an
	// independent implementation.
	Check func(msg, out []byte) error
}

// FromSigner makes an Instance of s.
func FromSigner(s signer.Signer) *Instance {
	alg, _ := signer.AlgorithmOf(s)
	return &Instance{Sign: s.SignContext, Public: s.Public(), Close: s.Close, Algorithm: alg}
}

// Verify checks sig over msg with the standard library, under the
// backend's algorithm or, when that is zero, the instance's; with Check
// set, it calls Check instead.
func (i *Instance) Verify(be Backend, msg, sig []byte) error {
	if i.Check != nil {
		return i.Check(msg, sig)
	}
	alg := be.Algorithm
	if alg == 0 {
		alg = i.Algorithm
	}
	if !alg.Valid() {
		return fmt.Errorf("bench: %s: no algorithm to verify with", be.Name)
	}
	return signertest.VerifyStd(alg, i.Public, msg, sig)
}

// Backend is one signer path in the table.
type Backend struct {
	// Name is the value of the backend= key in benchmark names, e.g.
	// "inprocess-ed25519".
	Name string
	// Algorithm is what Sign produces; signatures are verified with it.
	// Zero means the opened Instance says (a key named by URI on a real
	// token, known only once opened).
	Algorithm signer.Algorithm
	// Open opens the backend for one row. It is called outside the timed
	// loop.
	Open func(ctx context.Context, p Params) (*Instance, error)
	// Payloads overrides the table's payload sizes; nil means Payloads.
	Payloads []int
	// Chunks, when set, adds a chunk= axis with these APDU chunk sizes.
	Chunks []int
	// Messages, when set, returns the source of the messages to sign for a
	// payload of about size bytes; the source is called once per sign,
	// inside the timed loop, for devices that refuse to sign the same bytes
	// twice (the Ledger validator app wants votes at rising heights). Nil
	// means one random message of exactly size bytes, signed over and over.
	Messages func(size int) func() []byte
	// Validator marks a signer path a validator would run for its consensus
	// votes (not a baseline, a traced duplicate or a device's raw mode);
	// the report signs consecutive heights of votes on these. Ed25519 only.
	Validator bool
	// Traced attaches a signertrace.Collector to every sign and reports the
	// stages as metrics. Baseline rows leave it off.
	Traced bool
	// Stages lists stages to report on every row even when no sign of the
	// timed loop reached them, as 0 — the session stage of a backend that
	// opens a session only once every few thousand signs — so that the
	// metric is there to compare.
	Stages []signertrace.Stage
	// Skip, when set and returning a non-empty reason, skips the backend
	// (a real device that is not configured, a module that is absent).
	Skip func() string
}

// SkipReason returns why b cannot run here (Skip's answer), or "".
func (b Backend) SkipReason() string {
	if b.Skip == nil {
		return ""
	}
	return b.Skip()
}

// Sizes returns the payload sizes of b.
func (b Backend) Sizes() []int {
	if b.Payloads != nil {
		return b.Payloads
	}
	return Payloads
}

// MessageSource returns the source of the messages b signs for a payload
// of size bytes (see Messages).
func (b Backend) MessageSource(size int) func() []byte {
	if b.Messages != nil {
		return b.Messages(size)
	}
	msg := make([]byte, size)
	rand.Read(msg)
	return func() []byte { return msg }
}

var (
	mu       sync.Mutex
	backends []Backend
)

// Register adds b to the table. It panics on an empty or duplicate name or
// a missing Open, which are programming errors in a registration file.
func Register(b Backend) {
	mu.Lock()
	defer mu.Unlock()
	if b.Name == "" || b.Open == nil || (b.Algorithm != 0 && !b.Algorithm.Valid()) {
		panic(fmt.Sprintf("bench: incomplete backend %+v", b))
	}
	for _, o := range backends {
		if o.Name == b.Name {
			panic("bench: backend registered twice: " + b.Name)
		}
	}
	backends = append(backends, b)
}

// Backends returns the registered backends in registration order.
func Backends() []Backend {
	mu.Lock()
	defer mu.Unlock()
	return append([]Backend(nil), backends...)
}
