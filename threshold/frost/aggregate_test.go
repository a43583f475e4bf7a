package frost

import (
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"testing"

	"filippo.io/edwards25519"
)

// TestPrepareAggregate: an Aggregation prepared before the shares arrive
// gives a signature crypto/ed25519 accepts, names the participant of a bad
// share, and refuses shares out of order or missing.
func TestPrepareAggregate(t *testing.T) {
	d, err := Split(scalarFromUint(4242), 2, 3, rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	msg := []byte("prepared while the shares travel")
	n1, _ := Commit(d.Shares[0], rand.Reader)
	n3, _ := Commit(d.Shares[2], rand.Reader)
	list := []SigningCommitments{n1.Commitments(), n3.Commitments()}
	a, err := PrepareAggregate(d.Public, msg, list)
	if err != nil {
		t.Fatal(err)
	}
	s1, err := Sign(d.Shares[0], n1, msg, list)
	if err != nil {
		t.Fatal(err)
	}
	s3, err := Sign(d.Shares[2], n3, msg, list)
	if err != nil {
		t.Fatal(err)
	}
	sig, err := a.Aggregate([]SignatureShare{s1, s3})
	if err != nil {
		t.Fatal(err)
	}
	if !ed25519.Verify(d.Public.GroupPublicKey(), msg, sig) {
		t.Fatal("the prepared aggregate does not verify")
	}
	if _, err := a.Aggregate([]SignatureShare{s3, s1}); err == nil {
		t.Fatal("shares out of order accepted")
	}
	if _, err := a.Aggregate([]SignatureShare{s1}); err == nil {
		t.Fatal("a missing share accepted")
	}
	bad := SignatureShare{ID: 3, Z: new(edwards25519.Scalar).Add(s3.Z, scalarFromUint(1))}
	_, err = a.Aggregate([]SignatureShare{s1, bad})
	var se *ShareError
	if !errors.As(err, &se) || se.ID != 3 {
		t.Fatalf("bad share of 3: %v, want a *ShareError naming 3", err)
	}
	// The same Aggregation again, with the good shares: nothing in it
	// was consumed by the failure.
	if sig2, err := a.Aggregate([]SignatureShare{s1, s3}); err != nil || string(sig2) != string(sig) {
		t.Fatalf("second aggregate: %x, %v", sig2, err)
	}
	if _, err := PrepareAggregate(d.Public, msg, list[:1]); err == nil {
		t.Fatal("a list below the threshold prepared")
	}
}
