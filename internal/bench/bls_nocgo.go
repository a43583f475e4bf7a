//go:build !cgo

package bench

import (
	"context"
	"errors"

	"github.com/signerkit/signerkit/signer"
)

// Without cgo there is no blst: the BLS rows (see bls.go) are registered
// under their names and skipped, so that a table made without cgo says
// why they are missing.
func init() {
	skip := func() string { return "the BLS rows compare against blst, which needs cgo; this build has none" }
	open := func(context.Context, Params) (*Instance, error) { return nil, errors.New(skip()) }
	setup := func(int) (func() error, error) { return nil, errors.New(skip()) }
	for _, alg := range signer.BLSAlgorithms() {
		scheme := "minpk"
		if alg == signer.BLS12381MinSig {
			scheme = "minsig"
		}
		for _, name := range []string{"bls-", "raw-blst-", "raw-circl-"} {
			Register(Backend{Name: name + scheme, Algorithm: alg, Payloads: LargePayloads, Open: open, Skip: skip})
		}
		for _, name := range []string{alg.String(), "circl-" + alg.String()} {
			RegisterVerify(VerifyCase{Name: name, Setup: setup, Skip: skip})
		}
		for _, name := range []string{"-aggregate100-samemsg", "-aggregate100-distinct"} {
			RegisterVerify(VerifyCase{Name: alg.String() + name, Payloads: []int{32}, Setup: setup, Skip: skip})
		}
	}
}
