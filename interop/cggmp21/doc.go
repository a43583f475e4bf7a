// Package cggmp21 runs CGGMP21, the threshold ECDSA protocol of Canetti,
// Gennaro, Goldfeder, Makriyannis and Peled, as implemented by
// github.com/taurusgroup/multi-party-sig (its `cmp` protocol) at the one
// tag the module proxy serves, v0.6.0-alpha-2021-09-21, so that the
// threshold report can put it beside signerkit's own threshold signers.
//
// It is a benchmark comparator and nothing else. That tag is an alpha from
// 2021 and lacks later upstream fixes (among them a 2023 fix to the
// challenge of the zkmod proof); no key made here protects anything, and
// the online rows reuse presignatures, which would reveal a real key. It
// lives in a module of its own so that the main module never imports it.
//
// A Mesh runs three parties in one process, each pair joined by one
// mutual-TLS 1.3 connection over loopback that netshape delays as a
// network profile places the parties. Frames carry the library's own
// encoded messages; the Mesh counts their bytes (payload), the bytes
// under TLS and those plus TCP/IP headers (wire). Keygen, Presign and
// Sign run one protocol session each on the Mesh; Signature turns the
// library's signature into the 64-byte R‖S form with a low S, as Cosmos
// and gno require, and VerifyDecred and VerifyTextbook check it with two
// implementations that share no code.
//
// The rows are BenchmarkThreshold/cggmp21-2of3-secp256k1/…, in this
// package's tests, named and measured as the FROST rows of the main
// module's internal/thresholdbench so that cmd/signerbench shows them
// side by side (make bench-threshold-ecdsa).
package cggmp21
