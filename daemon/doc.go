// Package daemon is the engine of the signerkit command: a long-running
// remote signer that puts the keys of a config file — any signerkit
// backend, opened by URI — behind the gno and CometBFT validators it
// lists, with a double-sign guard per key, Prometheus metrics and a
// graceful shutdown. cmd/signerkit is a thin shell around it; a Go
// program can embed it the same way (New, then Run).
//
// # What it runs
//
// Each [[chain]] of the Config names its chain id, its protocol and its
// key. The keys are opened once each (two chains naming one URI share the
// key and its Guard) and each sits behind a guard.Guard whose state lives
// in the config's state_dir. Each [[chain.validator]] gets a
// privval.Endpoint (cometbft-v0.38, cometbft-v0.34, tm2-tmkms: signerkit
// dials the node) or a privval.Server (tm2-remote: the node dials
// signerkit). Over TCP every connection runs a SecretConnection under the
// identity key, and only node identities on the validator's allowlist are
// served; SIGHUP (Reload) applies a changed allowlist to the next
// connections. A listener never delays a handshake: it holds a
// connection whose handshake failed open for a while before closing it,
// and caps the connections pending their handshake, closing the least
// likely to be the validator's when a cap is reached (limit.go).
// A Unix socket has no allowlist: the one signerkit listens on is mode
// 0600, and only a stale socket at its path is ever replaced.
//
// # Failing closed
//
// New refuses to start, with an error that says how to fix it, when a
// TCP validator has no allowlist (allow_any must be said outright), when
// a chain has no double-sign state (state init makes it; the daemon never
// starts a chain from nothing), when state_dir is a symbolic link, is
// another user's or is writable by others, when another signerkit process
// holds state_dir's lock (start takes it before it opens any key), and when the
// key is not the one the state was made with: the last signature in the
// state must verify under the key, and the key must be the one bound to
// the chain in state_dir/signerkit-keys.json, which the first start
// writes (through a fresh temporary file opened with O_EXCL and
// O_NOFOLLOW, mode 0600, synced and renamed into place). A key in the
// config file the daemon does not know is an error naming the key and its
// line.
//
// # Devices that go away
//
// A sign or a /readyz probe that fails because the device went away
// (signer.ErrDisconnected, ErrDeviceNotFound, ErrClosed, ErrAppNotOpen)
// closes the backend and reopens it in the background, with backoff from
// 100 ms to 30 s; the device is back when it opens with the same public
// key and answers a health check (signer.HealthChecker, where the backend
// has one). Meanwhile signs get a *BackendDownError, which reaches the
// validator as a RemoteSignerError, and /readyz reports the backend with
// the typed cause.
//
// # Readiness
//
// /readyz (Ready) probes a backend's device through signer.HealthChecker
// when the device has neither answered a sign nor been probed within
// Options.HealthInterval (2 s), with the shortest sign_timeout of the
// key's chains as its deadline; concurrent scrapers share one probe. No
// probe runs while a sign is in flight, so a probe never delays a sign
// that is already on the device; a sign that arrives during a probe waits
// at most for the probe's one round trip (Ledger devices are serial).
//
// # Metrics
//
// Metrics are in the Daemon's own prometheus.Registry, served with
// /healthz and /readyz by Handler. docs/metrics.md lists them. A
// request's latency is measured from the request read to the answer
// written; a backend's stages are reported by the backend through a
// signertrace.Trace, each labelled measured or modeled (a simulator's latency
// profile), never summed together.
//
// # Concurrency
//
// A Daemon's methods are safe for concurrent use; Run is called once.
package daemon
