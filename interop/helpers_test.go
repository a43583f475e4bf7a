package interop

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ed25519"
	"io"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/signerkit/signerkit/signbytes"
)

// edKey is an in-memory Ed25519 signer.Signer.
type edKey struct{ priv ed25519.PrivateKey }

func newKey(seed byte) *edKey {
	return &edKey{ed25519.NewKeyFromSeed(bytes.Repeat([]byte{seed}, 32))}
}

func (k *edKey) Public() crypto.PublicKey { return k.priv.Public() }
func (k *edKey) Close() error             { return nil }
func (k *edKey) Sign(_ io.Reader, msg []byte, _ crypto.SignerOpts) ([]byte, error) {
	return ed25519.Sign(k.priv, msg), nil
}
func (k *edKey) SignContext(_ context.Context, msg []byte) ([]byte, error) {
	return ed25519.Sign(k.priv, msg), nil
}

// request is one thing a node asks its signer, independent of the node.
type request struct {
	phase signbytes.Phase // Proposal, Prevote or Precommit
	h, r  int64
	block byte // 0 is nil
	pol   int64
	ts    time.Time
}

func hash(tag, salt byte) []byte {
	if tag == 0 {
		return nil
	}
	b := bytes.Repeat([]byte{tag}, 32)
	b[0] = salt
	return b
}

// scenario returns n requests that move forward through heights, rounds
// and steps with repeats, timestamp-only changes, conflicts and
// regressions mixed in.
func scenario(seed uint64, n int) []request {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b9))
	base := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	cur := request{phase: signbytes.Proposal, h: 1, r: 0, block: 1, pol: -1, ts: base}
	out := []request{cur}
	for len(out) < n {
		next := cur
		switch x := rng.IntN(100); {
		case x < 45: // forward
			switch {
			case rng.IntN(8) == 0:
				next.h, next.r, next.phase = cur.h+1+rng.Int64N(2), rng.Int64N(2), signbytes.Phase(1+rng.IntN(3))
			case rng.IntN(6) == 0:
				next.r, next.phase = cur.r+1, signbytes.Phase(1+rng.IntN(3))
			case cur.phase < signbytes.Precommit:
				next.phase = cur.phase + 1
			default:
				next.h, next.r, next.phase = cur.h+1, 0, signbytes.Proposal
			}
			next.block = byte(1 + rng.IntN(3))
			if next.phase != signbytes.Proposal && rng.IntN(5) == 0 {
				next.block = 0
			}
			next.pol = 0
			if next.phase == signbytes.Proposal {
				next.pol = rng.Int64N(next.r+1) - 1
			}
			next.ts = base.Add(time.Duration(rng.Int64N(1e12)))
			cur = next
		case x < 60: // identical
		case x < 75: // timestamp only
			next.ts = cur.ts.Add(time.Duration(1 + rng.Int64N(1e10)))
		case x < 87: // conflicting block at the same HRS
			next.block = (cur.block + 1) % 4
			if next.phase == signbytes.Proposal && next.block == 0 {
				next.block = 1 + cur.block%3
				if next.block == cur.block {
					next.block = 3
				}
			}
		default: // regression
			switch rng.IntN(3) {
			case 0:
				if cur.h > 1 {
					next.h = cur.h - 1 - rng.Int64N(cur.h-1)
				}
			case 1:
				if cur.r > 0 {
					next.r = cur.r - 1
				}
			default:
				if cur.phase > signbytes.Proposal {
					next.phase = cur.phase - 1
				}
			}
			if next.phase == signbytes.Proposal && next.block == 0 {
				next.block = 1
			}
			if next.phase != signbytes.Proposal {
				next.pol = 0
			} else if next.pol == 0 && cur.phase != signbytes.Proposal {
				next.pol = -1
			}
		}
		out = append(out, next)
	}
	return out
}

// checkFormatParity parses the bytes node built in format f and rebuilds
// them: they must parse to want, want must build them byte for byte, and
// Parse must recognize them as f.
func checkFormatParity(t *testing.T, f signbytes.Format, node, name string, theirs []byte, want signbytes.Message) {
	t.Helper()
	got, err := signbytes.ParseFormat(theirs, f)
	if err != nil {
		t.Fatalf("%s: ParseFormat(%x, %v): %v", name, theirs, f, err)
	}
	want.Format = f
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s: parsed\n %+v\nwant\n %+v", name, got, want)
	}
	ours, err := want.Bytes()
	if err != nil || !bytes.Equal(ours, theirs) {
		t.Fatalf("%s: built %x, %v\n%s built %x", name, ours, err, node, theirs)
	}
	any, err := signbytes.Parse(theirs)
	if err != nil || any.Format&f == 0 {
		t.Fatalf("%s: Parse: %v, %v", name, any.Format, err)
	}
}
