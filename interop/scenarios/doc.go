// Package scenarios runs the latency analysis on a live gno network: four
// gnoland v1.7.1 validators on loopback, as processes, each with its key
// behind its own signerkit daemon, per scenario a mix of backends (in
// process, gnokey's keybase decrypting on every sign, the simulated Ledger
// and YubiHSM 2 in real time). It measures, from the validators' own logs,
// how long each Sign took per phase (proposal, prevote, precommit), sets
// signerkit's own metrics beside it, and reads block times and rounds from
// the nodes' block stores. Everything lives in its tests: `make scenarios`
// (100 blocks per scenario, writing docs/report/scenarios.md) and `make
// scenarios-smoke` (10 blocks, two scenarios) run them; `go test ./...`
// skips them unless SK_SCENARIOS is set.
//
// It is a package of the interop module rather than a module of its own:
// it needs exactly the gno version the interop module pins (the gnoland
// binary it runs is built from that module, and the same module's code
// reads the nodes' stores and WALs), and a second go.mod would have to
// repeat gno's several hundred go.sum lines and be kept in step by hand.
//
// What the validator side can see: gnoland logs "Signed and pushed vote"
// after its privValidator returns, with the vote's timestamp, which it
// took from the clock just before asking for the signature (the genesis
// sets time_iota_ms to 1 so that the timestamp is the clock's); and it
// logs "Signed proposal" after the proposal is signed, whose timestamp
// (taken just before) is in its WAL. The node's JSON log timestamps each
// line to the microsecond or better. The difference is the sign as the
// node sees it: the remote signer's transport, signerkit's guard and state
// write, and the backend.
package scenarios
