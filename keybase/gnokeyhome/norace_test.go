//go:build !race

package gnokeyhome_test

const raceEnabled = false
