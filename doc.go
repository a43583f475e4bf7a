// Package signerkit is a library of signer backends for validators and Go
// signing services, with a benchmark suite that tells, in numbers, where
// each millisecond of a signature goes.
//
// Every backend opens a key from one string (signer.Open with a URI such
// as keybase:dir=/var/lib/keys;label=validator) and gives it the one
// interface of package signer: a crypto.Signer (so it plugs into
// crypto/x509, crypto/tls and golang.org/x/crypto/ssh) that also signs
// whole messages under a context deadline and reports the stages of each
// sign to a latency trace. This package itself has no API: it holds this
// map and the benchmark tables.
//
// A map of the module, every package but internal/ ones (docs/layout.md
// groups those by role):
//   - signer: the Signer interface, the algorithms and their Verify, the
//     errors every backend wraps, and the registries of URI schemes
//     (signers and key stores).
//   - signer/signertrace: where a sign's time goes: a Trace of its stages
//     carried in its context, a Collector that sums them, and Instrument,
//     which keeps per-label statistics such as proposal, prevote and
//     precommit latencies.
//   - signer/signerstats: per-label latency statistics (counts, errors,
//     percentiles), which Instrument and the privval endpoints keep.
//   - signer/signertest: the conformance suite every backend runs on
//     itself, and that other implementations can run too.
//   - inprocess: keys in process memory, the floor every other path is
//     compared with.
//   - keybase: gnokey-compatible armored key files, unlocked once or
//     decrypted on every sign as gnokey does.
//   - keybase/gnokeyhome: gnokey's own key database, read-only.
//   - bls: BLS12-381 keys (min-pk as CometBFT v0.40, and min-sig) on blst,
//     or on pure-Go circl without cgo.
//   - ledger: the Ledger Tendermint validator app over a stall-free HID
//     transport or Speculos.
//   - ledger/ledgergo: zondax/ledger-go's transport for package ledger,
//     kept apart for its dependencies.
//   - ledger/ledgersim: a simulated Nano S Plus that users' tests can
//     import.
//   - yubihsm and yubihsm/yubihsmsim: the YubiHSM 2 over yubihsm-connector
//     with sessions that survive load, and a simulated device served as a
//     connector.
//   - openpgpcard and openpgpcard/cardsim: OpenPGP cards (YubiKey,
//     Nitrokey, Gnuk) over PC/SC, and a simulated card with the tokens'
//     latency profiles that GnuPG reaches through vpcd.
//   - pkcs11 and pkcs11/pkcs11test: any PKCS#11 token, Ed25519 included,
//     and throwaway SoftHSM2 tokens for tests.
//   - threshold, threshold/frost, threshold/partyd and
//     threshold/thresholdtest: FROST 2-of-3 signing over mutual TLS as a
//     signer.Signer (URI scheme threshold:), the RFC 9591 protocol, one
//     party run as a service (signerkit party), and loopback clusters for
//     tests.
//   - threshold/dkls23 and threshold/dkls23/dkls23test: threshold ECDSA on
//     secp256k1 (DKLS23, t of n) as a protocol library (key generation,
//     presigning, the online round), and its parties run in one process
//     for tests.
//   - guard: the double-sign guard around any signer, with state that
//     survives a crash.
//   - guard/migrate: read the state files of FilePV (CometBFT, gno),
//     tmkms and horcrux, to start the guard just after them.
//   - guard/etcdstore and guard/etcdstore/etcdtest: the guard's state
//     shared in etcd by signers on several hosts, and real etcd clusters
//     on loopback for tests.
//   - signbytes: parse and build tm2 and CometBFT sign bytes.
//   - signbytes/signbytestest: sample votes and proposals, in order, for tests and benchmarks.
//   - privval and privval/privvaltest: the remote-signer protocols gno and
//     CometBFT validators speak, over Unix or TCP with SecretConnection,
//     and a validator-side twin for tests.
//   - daemon: the remote-signer daemon's engine (config, chains, metrics,
//     lifecycle), which a program can embed.
//   - keyfmt: Ed25519 public keys as gno and CometBFT print and take them
//     (gpub1…, addresses, node_key.json, genesis validator entries).
//   - netshape: shaped sockets (delay, jitter, bandwidth, loss) and cloud
//     round-trip profiles, for tests and benchmarks.
//   - hardening: no core dumps, and locked memory for keys.
//
// And the commands:
//   - cmd/signerkit: the remote signer for gno and CometBFT validators
//     (docs/daemon.md).
//   - cmd/signerbench: the decision report — per signer path p50/p99, the
//     dominant stage and the share of a 1 s consensus timeout
//     (docs/report).
//   - cmd/ledgersim and cmd/yubihsmsim: the simulated Ledger and YubiHSM 2
//     as processes, for clients in other languages.
//   - cmd/cardsim: the simulated OpenPGP card in vsmartcard's virtual
//     reader, for GnuPG, OpenSC and ykman through pcscd.
//
// The benchmark suite in this directory (bench_test.go) measures every
// registered backend over payloads of 32 to 1024 bytes in one table:
//
//	go test -bench=. ./...
//
// Rows are named BenchmarkSign/backend=<name>/payload=<bytes>[/chunk=<bytes>],
// so benchstat compares two runs directly. Every row reports e2e-ms/op, the
// latency a caller of the real device would see (host time plus modeled
// time a simulator only accounted); traced rows add <stage>-ms/op for each
// stage (sign, kdf, session, transport, stall, wire, device, …), with
// <stage>-modeled-ms/op saying how much of it came from a latency profile
// rather than a clock, and counters such as apdus/op. The rows are
// registered in internal/bench, one file per backend. docs/benchmarks.md
// says how to read and compare them.
package signerkit
