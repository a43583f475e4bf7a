// Package cometbft040 checks package bls against CometBFT v0.40's own
// crypto/bls12381, not against our reading of it: CometBFT's keys verify
// our signatures and ours verify theirs, keys derive and encode to the same
// bytes, and key files pass between the two. It is a module of its own
// because the interop module pins CometBFT v0.38, and CometBFT builds its
// blst-backed BLS keys only with the bls12381 build tag (without it they
// are stubs that panic), so run it with
//
//	cd interop/cometbft040 && go test -tags bls12381 ./...
package cometbft040
