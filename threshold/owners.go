package threshold

import (
	"crypto/sha256"
	"crypto/tls"
	"sync"

	"github.com/signerkit/signerkit/threshold/frost"
)

// coordinatorID names a coordinator by the SHA-256 of its certificate's
// SubjectPublicKeyInfo.
type coordinatorID [sha256.Size]byte

func peerID(cs tls.ConnectionState) coordinatorID {
	if len(cs.PeerCertificates) == 0 {
		return coordinatorID{}
	}
	return sha256.Sum256(cs.PeerCertificates[0].RawSubjectPublicKeyInfo)
}

// nonceOwners remembers which coordinator each nonce pair was handed to,
// so that a presign asking for the outstanding pairs (a coordinator
// starting, or recovering from a failed presign) gets its own back and
// not another coordinator's: two coordinators holding one pair would each
// find it used once the other signed with it, or released it at Close. A
// pair the party knows no owner of (one loaded from the nonce file after
// a restart) goes to the first coordinator that asks. Entries of pairs no
// longer outstanding are dropped when the map outgrows the store.
//
// The map is in memory only, and a restart forgets it. That is safe: the
// owners serve liveness, never nonce safety, which is the nonce store's
// (a pair is marked consumed, durably, before a share is computed with
// it, and a used or released pair is refused with frost.ErrNonceUsed
// whoever asks). After a restart two coordinators may hold one pair; the
// one that finds it used forgets that party's pool, refills it from the
// party's list of its own outstanding pairs (by then owned), and signs
// again, with the same party allowed: one retry
// (TestOwnersLostOnPartyRestart). Persisting the map would cost a write
// per presign to save that retry.
type nonceOwners struct {
	mu sync.Mutex
	m  map[frost.NonceHandle]coordinatorID
}

// give records ps as handed to owner.
func (o *nonceOwners) give(owner coordinatorID, ps []frost.Presigned, nonces *frost.NonceStore) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.m == nil {
		o.m = map[frost.NonceHandle]coordinatorID{}
	}
	for _, p := range ps {
		o.m[p.Handle] = owner
	}
	if capacity := nonces.Stats().Capacity; len(o.m) > 2*capacity {
		o.prune(nonces.Outstanding())
	}
}

// prune drops the entries of pairs not in outstanding. o.mu is held.
func (o *nonceOwners) prune(outstanding []frost.Presigned) {
	live := make(map[frost.NonceHandle]bool, len(outstanding))
	for _, p := range outstanding {
		live[p.Handle] = true
	}
	for h := range o.m {
		if !live[h] {
			delete(o.m, h)
		}
	}
}

// owned returns the pairs of outstanding that are owner's, or have no
// owner yet (which become owner's).
func (o *nonceOwners) owned(owner coordinatorID, outstanding []frost.Presigned) []frost.Presigned {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.m == nil {
		o.m = map[frost.NonceHandle]coordinatorID{}
	}
	o.prune(outstanding)
	var out []frost.Presigned
	for _, p := range outstanding {
		if id, ok := o.m[p.Handle]; !ok || id == owner {
			o.m[p.Handle] = owner
			out = append(out, p)
		}
	}
	return out
}
