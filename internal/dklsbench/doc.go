// Package dklsbench measures package threshold/dkls23's 2-of-3 threshold
// ECDSA on secp256k1 in the shape of thresholdbench's FROST rows, so that
// the two (and the published DKLS23 and CGGMP21 figures) read side by
// side: key generation, presigning per presignature (CPU, bytes per party,
// sustained rate), the CPU of each step, and the online round at 1, 50,
// 100 and 200 signs in flight on netshape's profiles, with payload, TLS
// and wire bytes.
//
// The rows are BenchmarkThreshold/dkls23-2of3-secp256k1/..., in this
// package's tests; the functions here take a *testing.B so that a program
// can run them through testing.Benchmark too.
//
// A Fixture is a coordinator and the parties of a 2-of-3 key on loopback:
// each party a TLS 1.3 server holding its presignatures, the coordinator
// connected to each through netshape as a thresholdbench.Network places
// them. The online round is DKLS23's third: the coordinator sends each
// signing party a presignature's id and the message hash, each answers
// with its share, and the coordinator combines them into a signature
// (which dkls23.Combine verifies with decred before returning it). After
// the clock stops every signature is verified again with internal/refsecp256k1,
// an implementation sharing no code with decred, and any failure fails the
// row. Presignatures are made in process, before each row's clock starts;
// the presign rows measure them on their own.
//
// The CPU figures are the process's user and system time over the measured
// loop (thresholdbench.CPUTime): coordinator, parties, TLS and the network
// shaper together.
package dklsbench
