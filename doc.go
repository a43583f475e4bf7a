// Package signerkit is a library of signer backends for validators and Go
// signing services, with a benchmark suite that tells, in numbers, where
// each millisecond of a signature goes.
//
// Every backend gives a key the one interface of package signer: a
// crypto.Signer (so it plugs into crypto/x509, crypto/tls and
// golang.org/x/crypto/ssh) that also signs whole messages under a context
// deadline and reports the stages of each sign to a latency trace.
//
// A map of the module:
//
//   - signer: the Signer interface, the algorithms and their Verify, the
//     errors every backend wraps, latency tracing (Trace, Collector) and
//     Instrumented, which keeps per-label statistics such as proposal,
//     prevote and precommit latencies.
//   - signer/signertest: the conformance suite every backend runs on
//     itself, and that other implementations can run too.
//   - inprocess: keys in process memory, the floor every other path is
//     compared with (~0.03 ms an Ed25519 signature).
//
// Backends that hold keys elsewhere are being built in their own packages
// beside these, against this interface and suite: an encrypted
// gnokey-compatible keybase, the Ledger Tendermint validator app and the
// YubiHSM 2 (each with a simulated device in a subpackage that users' tests
// can import), and any PKCS#11 token.
//
// The benchmark suite in this directory (bench_test.go) measures every
// registered backend over payloads of 32 to 1024 bytes in one table:
//
//	go test -bench=. ./...
//
// Rows are named BenchmarkSign/backend=<name>/payload=<bytes>, so benchstat
// compares two runs directly. Traced rows add a metric per stage: measured
// time as <stage>-ms/op (sign-ms/op, transport-ms/op, …), time a simulator
// modeled as <stage>-modeled-ms/op, and e2e-ms/op, the measured time plus
// modeled time that was not slept. The rows are registered in
// internal/bench, one file per backend.
package signerkit
