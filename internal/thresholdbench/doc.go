// Package thresholdbench measures package threshold's 2-of-3
// FROST(Ed25519, SHA-512) signer the way published threshold signing
// comparisons (DKLS23 and CGGMP21, 2-of-3) are laid out: online signing
// latency at 1, 50, 100 and 200 signs in flight on shaped networks,
// presigning throughput, key generation latency, bytes per operation
// (protocol payload, bytes under TLS and bytes on the emulated wire) and
// CPU per operation.
//
// The rows are BenchmarkThreshold/frost-2of3-ed25519/..., in this
// package's tests; the functions here (Sign, Commit, Generate,
// PresignNet, DKGInProcess, DKGNet) take a *testing.B so that a program
// can run them through testing.Benchmark too. A Fixture runs three
// parties on loopback (thresholdtest) and a coordinator whose connections
// to them netshape delays as a Network places them. ParseResults,
// WriteTables and WriteLatencySVG turn a saved run into the results
// page's tables and chart.
//
// Every signature a row makes is verified with crypto/ed25519 after the
// clock stops, and a sign that fails, or a signature that does not
// verify, fails the row. The CPU figures are the process's user and
// system time (getrusage) over the measured loop: coordinator, parties,
// TLS and the network shaper together, as a threshold comparison's
// "core-seconds" are.
//
// TestSoak, behind SIGNERKIT_FROST_SOAK=<duration>, holds 200 signs in
// flight on the transatlantic profile with the nonces in synced files
// and requires no failure.
//
// Nothing here is safe for concurrent use unless its doc says so; a
// Fixture is.
package thresholdbench
