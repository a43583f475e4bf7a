package dklsbench

import (
	"crypto/rand"
	"crypto/sha256"
	"fmt"
	"testing"
	"time"

	"github.com/signerkit/signerkit/threshold/dkls23"
	"github.com/signerkit/signerkit/threshold/dkls23/dkls23test"
)

// Steps names the steps ComputeRow times, in order.
var Steps = []string{"presign-round1", "presign-round2", "presign-finish", "sign-share", "combine"}

// ComputeRow is compute/steps: each iteration runs a whole presigning and
// signing of {1, 2} in process, and the row reports party 1's time in each
// step, in µs of one goroutine (the steps are single-threaded):
// <step>-µs for each of Steps. The combination is the coordinator's (it
// verifies the signature with decred).
func ComputeRow(b *testing.B) {
	shares := fixtureShares(b)
	var total [5]time.Duration
	i := 0
	for b.Loop() {
		i++
		sid := fmt.Appendf(nil, "compute %d", i)
		d, err := timeSteps(shares, sid)
		if err != nil {
			b.Fatal(err)
		}
		for k := range total {
			total[k] += d[k]
		}
	}
	for k, name := range Steps {
		b.ReportMetric(float64(total[k])/1e3/float64(b.N), name+"-µs")
	}
}

// timeSteps runs one presigning and signing and returns the time of party
// 1's steps (party 2's run untimed, before party 1's in each round).
func timeSteps(shares []*dkls23.Share, sid []byte) ([5]time.Duration, error) {
	var d [5]time.Duration
	timed := func(k int, f func() error) error {
		t0 := time.Now()
		err := f()
		d[k] += time.Since(t0)
		return err
	}
	runs := map[int]*dkls23.Presign{}
	out := map[int]map[int][]byte{}
	for _, id := range []int{2, 1} {
		err := timed(0, func() (err error) {
			runs[id], out[id], err = dkls23.NewPresign(shares[id-1], sid, Signers, rand.Reader)
			return err
		})
		if err != nil {
			return d, err
		}
		if id == 2 {
			d[0] = 0 // party 2's is not counted
		}
	}
	in := dkls23test.Deliver(out)
	out = map[int]map[int][]byte{}
	pre := map[int]*dkls23.Presignature{}
	hash := sha256.Sum256(sid)
	var parts []*dkls23.SignShare
	steps := []func(id int) error{
		func(id int) (err error) { out[id], err = runs[id].Round2(in[id]); return err },
		func(id int) (err error) { pre[id], err = runs[id].Finish(in[id]); return err },
		func(id int) error {
			p, err := pre[id].Sign(hash[:])
			parts = append(parts, p)
			return err
		},
	}
	for k, step := range steps {
		for _, id := range []int{2, 1} {
			if id == 2 {
				if err := step(id); err != nil {
					return d, err
				}
				continue
			}
			if err := timed(k+1, func() error { return step(id) }); err != nil {
				return d, err
			}
		}
		if k == 0 {
			in = dkls23test.Deliver(out)
		}
	}
	err := timed(4, func() error { _, err := dkls23.Combine(shares[0].PublicKey(), hash[:], parts); return err })
	return d, err
}
