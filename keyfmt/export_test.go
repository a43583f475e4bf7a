package keyfmt

import "github.com/signerkit/signerkit/internal/bech32"

var bech32EncodeLong = bech32.EncodeBytesLong
