//go:build !race

package keybase

const raceEnabled = false
