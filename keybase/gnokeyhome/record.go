package gnokeyhome

import (
	"crypto"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"strconv"

	"github.com/decred/dcrd/dcrec/secp256k1/v4"

	"github.com/signerkit/signerkit/internal/bech32"
	"github.com/signerkit/signerkit/keybase"
	"github.com/signerkit/signerkit/signer"
)

// A key's record in keys.db ("<name>.info") is amino.MarshalAnySized of
// one of tm2/pkg/crypto/keys' Info types (v1.7.1, types.go): a uvarint
// length, then a protobuf Any {1: type URL, 2: the struct's fields}.
//
//	/tm.keys.LocalInfo    1 name, 2 public key (Any), 3 private key armor
//	/tm.keys.LedgerInfo   1 name, 2 public key, 3 BIP44 path {1 purpose,
//	                      2 coin type, 3 account, 4 change, 5 address index}
//	/tm.keys.OfflineInfo  1 name, 2 public key
//	/tm.keys.MultiInfo    1 name, 2 public key (/tm.PubKeyMultisig),
//	                      3 threshold, 4 repeated {1 public key, 2 weight}
//
// Public keys are Any too: /tm.PubKeyEd25519 {1: 32 bytes},
// /tm.PubKeySecp256k1 {1: 33 bytes, compressed}, /tm.PubKeyMultisig {1: k,
// 2: repeated public key}. Amino leaves out fields at their zero value.
const (
	typeLocal   = "/tm.keys.LocalInfo"
	typeLedger  = "/tm.keys.LedgerInfo"
	typeOffline = "/tm.keys.OfflineInfo"
	typeMulti   = "/tm.keys.MultiInfo"

	typePubEd25519   = "/tm.PubKeyEd25519"
	typePubSecp256k1 = "/tm.PubKeySecp256k1"
	typePubMultisig  = "/tm.PubKeyMultisig"

	// maxRecord bounds a record: a local key's is under 1 KiB, a multisig
	// of many members a few KiB.
	maxRecord = 1 << 20
	// maxDepth bounds multisig keys nested in multisig keys.
	maxDepth = 4
)

// Kind is the kind of key a gnokey record holds, as `gnokey list` names it.
type Kind uint8

// The kinds of gnokey key (tm2/pkg/crypto/keys.KeyType).
const (
	// Local is a key whose private key is stored, armored and (unless
	// its passphrase was empty) encrypted: `gnokey add`, `gnokey import`.
	// It is the only kind that signs here.
	Local Kind = iota + 1
	// Ledger is a reference to a key on a Ledger device's Cosmos app
	// (`gnokey add --ledger`): a public key and a BIP44 path.
	Ledger
	// Offline is a public key alone (`gnokey add bech32`).
	Offline
	// Multi is a multisig public key (`gnokey add multisig`).
	Multi
)

func (k Kind) String() string {
	switch k {
	case Local:
		return "local"
	case Ledger:
		return "ledger"
	case Offline:
		return "offline"
	case Multi:
		return "multi"
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// KeyInfo describes one key of a gnokey home, as `gnokey list` shows it.
type KeyInfo struct {
	// Name is the key's name in gnokey: any string, even one that is
	// not a file name (spaces, '/', non-ASCII).
	Name string
	Kind Kind
	// Address is the key's gno.land address, "g1…", as gnokey shows it.
	Address string
	// Algorithm is signer.Ed25519 or signer.ECDSASecp256k1; 0 for a
	// multisig key.
	Algorithm signer.Algorithm
	// Public is an ed25519.PublicKey, a secp256k1 *ecdsa.PublicKey, or
	// for a multisig key a *Multisig.
	Public crypto.PublicKey
	// Path is a Ledger key's BIP44 path, as gnokey prints it
	// ("44'/118'/0'/0/0"); empty for the other kinds.
	Path string
}

// Multisig is the public key of a gnokey multisig key: Threshold of the
// Keys must sign. Its members are ed25519.PublicKey, secp256k1
// *ecdsa.PublicKey or *Multisig values.
type Multisig struct {
	Threshold uint64
	Keys      []crypto.PublicKey
}

// RecordError is a record of keys.db that cannot be read: not the amino
// bytes of a gnokey key, or inconsistent with its database key. It
// unwraps to signer.ErrCorrupt, or to signer.ErrUnsupported for a record
// of a type that gnokey v1.7.1 does not write (Unsupported).
type RecordError struct {
	// Key is the record's database key ("<name>.info",
	// "<address>.address"), quoted.
	Key string
	// Problem says what is wrong.
	Problem string
	// Unsupported marks a well-formed record of an unknown type.
	Unsupported bool
}

func (e *RecordError) Error() string {
	if e.Key == "" {
		return "gnokeyhome: record: " + e.Problem
	}
	return "gnokeyhome: record " + e.Key + ": " + e.Problem
}

// Unwrap returns signer.ErrCorrupt, or signer.ErrUnsupported.
func (e *RecordError) Unwrap() error {
	if e.Unsupported {
		return signer.ErrUnsupported
	}
	return signer.ErrCorrupt
}

// record is a decoded record: its KeyInfo and, for a local key, its armor.
type record struct {
	KeyInfo
	armor []byte
}

// wipe clears the armor, which holds the key in base64 when it was
// stored under an empty passphrase.
func (r *record) wipe() {
	if r != nil {
		clear(r.armor)
	}
}

// quote quotes a name or key read from the database for a message, in
// ASCII and shortened.
func quote(s string) string {
	if len(s) > 80 {
		s = s[:80]
	}
	return strconv.QuoteToASCII(s)
}

// decodeRecord decodes a record of keys.db: amino.MarshalAnySized of a
// keys.Info. It returns a *RecordError (with no Key; the caller names it)
// for anything else.
func decodeRecord(b []byte) (*record, error) {
	if len(b) > maxRecord {
		return nil, &RecordError{Problem: fmt.Sprintf("%d bytes, over %d", len(b), maxRecord)}
	}
	n, k := binary.Uvarint(b)
	if k <= 0 || n != uint64(len(b)-k) {
		return nil, &RecordError{Problem: "the length prefix is not the record's length"}
	}
	url, val, err := decodeAny(b[k:])
	if err != nil {
		return nil, err
	}
	r := &record{}
	switch url {
	case typeLocal:
		r.Kind = Local
	case typeLedger:
		r.Kind = Ledger
	case typeOffline:
		r.Kind = Offline
	case typeMulti:
		r.Kind = Multi
	default:
		return nil, &RecordError{Problem: "type " + quote(url) + " is not a gnokey key's", Unsupported: true}
	}
	var (
		pubAny    []byte
		havePub   bool
		path      [5]uint64
		threshold uint64
		members   int
	)
	err = fields(val, func(num int, wire byte, v []byte, x uint64) error {
		switch {
		case num == 1 && wire == wireBytes:
			r.Name = string(v)
		case num == 2 && wire == wireBytes:
			pubAny, havePub = v, true
		case num == 3 && wire == wireBytes && r.Kind == Local:
			r.armor = append([]byte(nil), v...)
		case num == 3 && wire == wireBytes && r.Kind == Ledger:
			return fields(v, func(num int, wire byte, _ []byte, x uint64) error {
				if wire != wireVarint || num < 1 || num > 5 || x > 1<<32-1 || (num == 4 && x > 1) {
					return &RecordError{Problem: "malformed BIP44 path"}
				}
				path[num-1] = x
				return nil
			})
		case num == 3 && wire == wireVarint && r.Kind == Multi:
			threshold = x
		case num == 4 && wire == wireBytes && r.Kind == Multi:
			members++ // {1: public key, 2: weight}, which the public key repeats
		case num <= 4:
			return &RecordError{Problem: fmt.Sprintf("field %d of %s has the wrong wire type", num, url)}
		}
		// Fields gnokey v1.7.1 does not write are skipped, as amino
		// and protobuf skip them.
		return nil
	})
	if err != nil {
		r.wipe()
		return nil, err
	}
	if !havePub {
		r.wipe()
		return nil, &RecordError{Problem: "no public key"}
	}
	r.Algorithm, r.Public, err = decodePublic(pubAny, 0)
	if err != nil {
		r.wipe()
		return nil, err
	}
	if r.Address, err = address(pubAny, r.Public); err != nil {
		r.wipe()
		return nil, err
	}
	switch r.Kind {
	case Local:
		if len(r.armor) == 0 {
			return nil, &RecordError{Problem: "a local key without its private key armor"}
		}
		if r.Algorithm == 0 {
			r.wipe()
			return nil, &RecordError{Problem: "a local key with a multisig public key"}
		}
	case Ledger:
		r.Path = fmt.Sprintf("%d'/%d'/%d'/%d/%d", path[0], path[1], path[2], path[3], path[4])
	case Multi:
		m, ok := r.Public.(*Multisig)
		if !ok || threshold != m.Threshold || members != len(m.Keys) {
			return nil, &RecordError{Problem: "a multisig key whose threshold or members differ from its public key's"}
		}
	}
	return r, nil
}

// address returns the gno.land address of a public key: keybase.Address
// for Ed25519 and secp256k1; for a multisig key, as tm2 computes it, the
// first 20 bytes of SHA-256 of its amino Any bytes.
func address(anyBytes []byte, pub crypto.PublicKey) (string, error) {
	if _, ok := pub.(*Multisig); ok {
		sum := sha256.Sum256(anyBytes)
		return bech32.EncodeBytes(keybase.AddressPrefix, sum[:20])
	}
	a, err := keybase.Address(pub)
	if err != nil {
		return "", &RecordError{Problem: "public key: " + err.Error()}
	}
	return a, nil
}

// decodePublic decodes a public key's amino Any bytes.
func decodePublic(b []byte, depth int) (signer.Algorithm, crypto.PublicKey, error) {
	url, val, err := decodeAny(b)
	if err != nil {
		return 0, nil, err
	}
	switch url {
	case typePubEd25519, typePubSecp256k1:
		var key []byte
		err := fields(val, func(num int, wire byte, v []byte, _ uint64) error {
			if num == 1 {
				if wire != wireBytes {
					return &RecordError{Problem: "malformed public key"}
				}
				key = v
			}
			return nil
		})
		if err != nil {
			return 0, nil, err
		}
		if url == typePubEd25519 {
			if len(key) != ed25519.PublicKeySize {
				return 0, nil, &RecordError{Problem: fmt.Sprintf("Ed25519 public key of %d bytes", len(key))}
			}
			return signer.Ed25519, append(ed25519.PublicKey(nil), key...), nil
		}
		if len(key) != 33 {
			return 0, nil, &RecordError{Problem: fmt.Sprintf("secp256k1 public key of %d bytes, want 33 (compressed)", len(key))}
		}
		k, err := secp256k1.ParsePubKey(key)
		if err != nil {
			return 0, nil, &RecordError{Problem: "secp256k1 public key not on the curve"}
		}
		return signer.ECDSASecp256k1, k.ToECDSA(), nil
	case typePubMultisig:
		if depth >= maxDepth {
			return 0, nil, &RecordError{Problem: fmt.Sprintf("multisig keys nested over %d deep", maxDepth)}
		}
		m := &Multisig{}
		err := fields(val, func(num int, wire byte, v []byte, x uint64) error {
			switch {
			case num == 1 && wire == wireVarint:
				m.Threshold = x
			case num == 2 && wire == wireBytes:
				_, k, err := decodePublic(v, depth+1)
				if err != nil {
					return err
				}
				m.Keys = append(m.Keys, k)
			case num <= 2:
				return &RecordError{Problem: "malformed multisig public key"}
			}
			return nil
		})
		if err != nil {
			return 0, nil, err
		}
		if m.Threshold == 0 || m.Threshold > uint64(len(m.Keys)) {
			return 0, nil, &RecordError{Problem: fmt.Sprintf("multisig threshold %d of %d keys", m.Threshold, len(m.Keys))}
		}
		return 0, m, nil
	}
	return 0, nil, &RecordError{Problem: "public key type " + quote(url) + " is not one gnokey writes", Unsupported: true}
}

// decodeAny splits amino Any bytes into the type URL and the value.
func decodeAny(b []byte) (url string, val []byte, err error) {
	var haveURL bool
	err = fields(b, func(num int, wire byte, v []byte, _ uint64) error {
		switch {
		case num == 1 && wire == wireBytes && !haveURL:
			url, haveURL = string(v), true
		case num == 2 && wire == wireBytes && haveURL && val == nil:
			val = v
		default:
			return &RecordError{Problem: "malformed amino Any"}
		}
		return nil
	})
	if err != nil {
		return "", nil, err
	}
	if !haveURL {
		return "", nil, &RecordError{Problem: "amino Any without a type URL"}
	}
	return url, val, nil
}

// The protobuf wire types amino writes.
const (
	wireVarint = 0
	wire64     = 1
	wireBytes  = 2
	wire32     = 5
)

// fields calls f for each field of the protobuf message b, in order: its
// number, wire type and value (v for bytes, x for the others). It stops
// at f's first error, or with a *RecordError at bytes that are not a
// message.
func fields(b []byte, f func(num int, wire byte, v []byte, x uint64) error) error {
	for len(b) > 0 {
		tag, n := binary.Uvarint(b)
		if n <= 0 || tag>>3 == 0 || tag>>3 > 1<<29-1 {
			return &RecordError{Problem: "malformed field tag"}
		}
		b = b[n:]
		num, wire := int(tag>>3), byte(tag&7)
		var v []byte
		var x uint64
		switch wire {
		case wireVarint:
			if x, n = binary.Uvarint(b); n <= 0 {
				return &RecordError{Problem: "malformed varint"}
			}
			b = b[n:]
		case wire64, wire32:
			size := 8
			if wire == wire32 {
				size = 4
			}
			if len(b) < size {
				return &RecordError{Problem: "truncated fixed-size field"}
			}
			b = b[size:]
		case wireBytes:
			l, n := binary.Uvarint(b)
			if n <= 0 || l > uint64(len(b)-n) {
				return &RecordError{Problem: "truncated length-delimited field"}
			}
			v, b = b[n:n+int(l)], b[n+int(l):]
		default:
			return &RecordError{Problem: fmt.Sprintf("wire type %d", wire)}
		}
		if err := f(num, wire, v, x); err != nil {
			return err
		}
	}
	return nil
}
