//go:build race

package ed25519sign

const raceEnabled = true
