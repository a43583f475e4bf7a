//go:build !bls12381

package cometbft040

import (
	"testing"

	"github.com/cometbft/cometbft/crypto/bls12381"
)

// Without the bls12381 tag CometBFT's BLS keys are stubs: there is nothing
// to check against.
func TestNeedsTag(t *testing.T) {
	if bls12381.Enabled {
		t.Fatal("bls12381.Enabled without the bls12381 build tag")
	}
	t.Skip("CometBFT's bls12381 keys need the build tag: go test -tags bls12381 ./...")
}
