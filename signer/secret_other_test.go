//go:build !unix

package signer_test

import (
	"os"
	"testing"

	"github.com/signerkit/signerkit/signer"
)

// testSecretFileUnix: where permissions are not Unix mode bits (Windows
// keeps them in ACLs), SecretFile checks no mode or owner, so a file whose
// mode bits would let its group or others read it on Unix is read. The
// Unix mode, owner and FIFO checks are secret_unix_test.go's, and run on
// Unix only.
func testSecretFileUnix(t *testing.T, write func(name string, b []byte, mode os.FileMode) string) {
	const pin = "Zq7-pin"
	p := write("mode", []byte(pin), 0o644)
	if got, err := signer.SecretFile(p)(); err != nil || string(got) != pin {
		t.Errorf("a file of mode 0644 where mode bits are not permissions: SecretFile = %q, %v; want %q", got, err, pin)
	}
	t.Log("not Unix: the mode, owner and FIFO checks of secret_unix_test.go do not apply here")
}
