//go:build race

package gnokeyhome_test

// raceEnabled is set under the race detector, where one key derivation
// at gnokey's bcrypt cost (12) takes over ten seconds.
const raceEnabled = true
