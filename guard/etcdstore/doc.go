// Package etcdstore keeps the double-sign state of package guard in etcd,
// so that two or three signers on different hosts, each holding the same
// validator key, sign as one: a guard.Store.
//
// # Contract
//
// Each chain's state is one key, Prefix + "/chain/" + the escaped chain
// id, whose value (EncodeValue) holds the last height, round and step
// signed, the SHA-256 of those sign bytes, the sign bytes and the
// signature, under a CRC-32C. Its version is the key's mod revision.
// Swap is one etcd transaction: compare the key's mod revision with the
// version the Guard read; if equal, put the new value; if not, read the
// key. etcd commits it through Raft, so it is linearizable: of two
// signers that sign conflicting messages from one state, exactly one
// transaction commits, and the Guard releases a signature only after its
// own did. Load is a linearizable range read. There is no lease, lock or
// leader election on the signing path: a signer that dies holds nothing
// the others wait for.
//
// A request to a member that fails or takes longer than
// Config.AttemptTimeout is tried on the next member; trying a Swap again
// is safe, since a first try that did commit makes the second's compare
// fail and return the state it wrote, which the Guard serves as a
// same-step replay. When no member answers before the sign's deadline
// (DefaultTimeout for a context without one) because all are down or
// none has a quorum, the error is an *UnavailableError, which the
// Guard returns inside a *guard.StoreError: the sign is refused, and the
// next one tries again.
//
// # Transport
//
// The Store speaks etcd's v3 JSON gateway (/v3/kv/range, /v3/kv/txn)
// over HTTPS with a client certificate, through net/http: no gRPC and no
// etcd client library in the binary (docs/ha.md has the measurement that
// decided it). It works with etcd 3.4 and later.
package etcdstore
