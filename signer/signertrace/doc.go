// Package signertrace says where the time of a sign goes, as
// net/http/httptrace does for a request.
//
// A Trace carried by a context (WithTrace) receives each stage of a sign —
// kdf, session, transport, stall, wire, confirm, device, sign — with its
// duration and whether a clock measured it or a simulator's latency
// profile modeled it, plus counters such as APDUs and bytes on the wire;
// and, from package guard rather than a backend, state: the durable write
// of the signed step that follows a sign. Every signerkit backend reports to the Trace of the context it signs
// with (ContextTrace); with none attached, reporting a stage costs a
// context lookup and a nil check (BenchmarkTraceOverhead).
//
// A Collector sums one or more signs' stages into a Summary. Instrument
// wraps a signer.Signer and keeps latency statistics per caller-chosen
// label (WithLabel: proposal, prevote, precommit), in package
// signer/signerstats's Snapshot.
//
// Trace hooks must be safe for concurrent use when one Trace is attached
// to concurrent calls. Collector and Instrumented are safe for concurrent
// use.
package signertrace
