//go:build !race

package inprocess_test

const raceEnabled = false
