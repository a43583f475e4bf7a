//go:build !race

package yubihsm_test

const raceEnabled = false
