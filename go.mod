module github.com/signerkit/signerkit

go 1.24.0

require github.com/decred/dcrd/dcrec/secp256k1/v4 v4.4.1
