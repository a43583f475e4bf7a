// Package interop checks signerkit against the code of gno and CometBFT
// themselves, not against our reading of it. It is a separate module so
// that the main module never depends on either; run it with
// `cd interop && go test ./...`.
//
// It holds, side by side:
//   - CometBFT v0.38.26 (github.com/cometbft/cometbft);
//   - CometBFT v0.34.35, under its module path github.com/tendermint/tendermint
//     with a replace directive, the way CometBFT v0.34 is consumed;
//   - gno v1.7.1 (github.com/gnolang/gno).
//
// The tests check that package signbytes parses the sign bytes each of
// them builds (votes, proposals and, for v0.38, vote extensions) and
// rebuilds them byte for byte; that package guard, given the same key and
// the same stream of requests (advances, repeats, timestamp-only changes,
// conflicts and regressions), signs, refuses and hands back timestamps
// exactly as CometBFT's FilePV (v0.34 and v0.38) and gno's PrivValidator
// do, with identical signatures; and that each node's own verification
// accepts what the guard signs.
package interop
