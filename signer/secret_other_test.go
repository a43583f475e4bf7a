//go:build !unix

package signer_test

import (
	"os"
	"testing"
)

func testSecretFileUnix(*testing.T, func(string, []byte, os.FileMode) string) {}
