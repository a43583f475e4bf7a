// Package deps pins the modules the backends are being built on while they
// land; it is removed once every backend imports its own.
package deps

import (
	_ "github.com/certusone/yubihsm-go"
	_ "github.com/miekg/pkcs11"
	_ "github.com/stretchr/testify/require"
	_ "github.com/zondax/hid"
	_ "github.com/zondax/ledger-go"
	_ "go.uber.org/goleak"
	_ "golang.org/x/crypto/bcrypt"
	_ "golang.org/x/crypto/blowfish"
	_ "golang.org/x/crypto/nacl/secretbox"
)
