// Package sidebyside runs threshold validators against horcrux on one
// CometBFT v0.38.26 node (kvstore, timeout_commit 100 ms) and one host, in
// one run: the node's own FilePV, signerkit with one key, signerkit's FROST
// 2-of-3 (three `signerkit party` processes and a `signerkit start`
// coordinator) and horcrux v3.3.2's 2-of-3 (three `horcrux start`
// cosigners, built from horcrux's own module), first with the parties on
// loopback, then with netshape's same-zone, cross-Europe and trio profiles
// between them. A relay between the node and the signer times every sign
// request.
//
// It is a module of its own so that neither the main module nor interop's
// takes CometBFT's or horcrux's dependencies; horcrux's binary is built
// from its own go.mod, so its dependency versions are its own too.
//
// `go test` runs a smoke version (20 heights each, loopback, one kill
// each); `make sidebyside` runs the full comparison and writes
// docs/report/threshold-vs-horcrux.md.
package sidebyside
