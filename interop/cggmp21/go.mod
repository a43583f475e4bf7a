module github.com/signerkit/signerkit/interop/cggmp21

go 1.26.0

replace github.com/signerkit/signerkit => ../..

require (
	github.com/decred/dcrd/dcrec/secp256k1/v4 v4.4.1
	github.com/fxamacker/cbor/v2 v2.3.0
	github.com/signerkit/signerkit v0.0.0-00010101000000-000000000000
	github.com/taurusgroup/multi-party-sig v0.6.0-alpha-2021-09-21
)

require (
	filippo.io/edwards25519 v1.2.0 // indirect
	github.com/BurntSushi/toml v1.6.0 // indirect
	github.com/cronokirby/safenum v0.29.0 // indirect
	github.com/decred/dcrd/dcrec/secp256k1/v3 v3.0.0 // indirect
	github.com/x448/float16 v0.8.4 // indirect
	github.com/zeebo/blake3 v0.2.0 // indirect
	golang.org/x/crypto v0.57.0 // indirect
	golang.org/x/sys v0.48.0 // indirect
)
