package cardsim

import (
	"slices"
	"time"
)

// Profile is a token's latency model: the on-card time of each operation
// it supports, by algorithm, with the source of each figure. Operations
// with no figure take no modeled time.
type Profile struct {
	// Name names the token and the section its figures come from, as
	// reported in signertrace.StageInfo.Profile.
	Name string
	// Algorithms are the key attributes the token accepts, its default
	// first.
	Algorithms []Algorithm
	// Sign is the on-card time of one PSO:COMPUTE DIGITAL SIGNATURE or
	// INTERNAL AUTHENTICATE, by algorithm.
	Sign map[Algorithm]time.Duration
	// Decipher is the on-card time of one PSO:DECIPHER, by algorithm.
	Decipher map[Algorithm]time.Duration
	// APDU is the transport time of one exchange (CCID over USB), each
	// command and its response together.
	APDU time.Duration
	// Firmware, when set, is the version a YubiKey's vendor command GET
	// VERSION (INS F1) returns, which ykman reads first; other tokens
	// answer F1 with 6D00, as they do not know it.
	Firmware [3]byte
}

func (p Profile) supports(a Algorithm) bool { return slices.Contains(p.Algorithms, a) }

// cost returns the modeled on-card time of an operation.
func (p Profile) cost(o op) time.Duration {
	switch o.kind {
	case opSign:
		return p.Sign[o.alg]
	case opDecipher:
		return p.Decipher[o.alg]
	}
	return 0
}

// The figures below come from docs/latency-profiles.md §7, which derives
// them from the keycard benchmark's findings (the gnuk-users post of August
// 2017 and the author's comparison of 2017-10-26): the YubiKey 4 is about
// ten times slower than the CPU at RSA-2048 and ten times slower again at
// RSA-4096; the NEO at 2048 bits is as slow as the YubiKey 4 at 4096; the
// FST-01 takes more than a second at 2048 bits and about 8 s at 4096. The
// benchmark timed decryption by a whole gpg process; a signature is the
// same RSA private-key operation, so Sign uses the decipher figure. The
// CPU baseline, and every figure §7 marks as assumed, are not in the
// findings: see that section.
const (
	// cpuBaseline is the benchmark's CPU time for one RSA-2048
	// decryption by a gpg process (docs/latency-profiles.md §7, assumed).
	cpuBaseline = 20 * time.Millisecond
	yk4RSA2048  = 10 * cpuBaseline
	yk4RSA4096  = 10 * yk4RSA2048
	gnukRSA2048 = 1100 * time.Millisecond
	gnukRSA4096 = 8 * time.Second
	// gnukEC is Gnuk's Ed25519/P-256 figure (docs/latency-profiles.md §7,
	// assumed: a tenth of its RSA-2048 time).
	gnukEC = gnukRSA2048 / 10
	// usbAPDU is one CCID exchange at USB full speed (assumed, 1 ms
	// frames: a bulk-out and a bulk-in transfer).
	usbAPDU = 2 * time.Millisecond
)

func rsaOnly(r2048, r4096 time.Duration) map[Algorithm]time.Duration {
	return map[Algorithm]time.Duration{RSA2048: r2048, RSA4096: r4096}
}

// YubiKey4 is a YubiKey 4: RSA 2048 and 4096 only (its firmware has no
// elliptic curves on the OpenPGP application).
var YubiKey4 = Profile{
	Name:       "yubikey4 (docs/latency-profiles.md §7)",
	Algorithms: []Algorithm{RSA2048, RSA4096},
	Sign:       rsaOnly(yk4RSA2048, yk4RSA4096),
	Decipher:   rsaOnly(yk4RSA2048, yk4RSA4096),
	APDU:       usbAPDU,
	Firmware:   [3]byte{4, 3, 7},
}

// YubiKeyNEO is a YubiKey NEO: RSA 2048, as slow as the YubiKey 4 at 4096.
// The NEO does not take 4096-bit keys.
var YubiKeyNEO = Profile{
	Name:       "yubikey-neo (docs/latency-profiles.md §7)",
	Algorithms: []Algorithm{RSA2048},
	Sign:       map[Algorithm]time.Duration{RSA2048: yk4RSA4096},
	Decipher:   map[Algorithm]time.Duration{RSA2048: yk4RSA4096},
	APDU:       usbAPDU,
	Firmware:   [3]byte{3, 4, 9}, // a NEO's, as one reports it in open-keychain issue 2179
}

func gnukTimes() map[Algorithm]time.Duration {
	return map[Algorithm]time.Duration{
		RSA2048: gnukRSA2048, RSA4096: gnukRSA4096,
		EdDSA25519: gnukEC, ECDSAP256: gnukEC, ECDHP256: gnukEC, ECDHX25519: gnukEC,
	}
}

// gnukAlgorithms are Gnuk's: RSA and the curves.
var gnukAlgorithms = []Algorithm{RSA2048, RSA4096, EdDSA25519, ECDSAP256, ECDHP256, ECDHX25519}

// FST01 is an FST-01 running Gnuk.
var FST01 = Profile{
	Name:       "fst01 (gnuk; docs/latency-profiles.md §7)",
	Algorithms: gnukAlgorithms,
	Sign:       gnukTimes(),
	Decipher:   gnukTimes(),
	APDU:       usbAPDU,
}

// NitrokeyStart runs Gnuk on the same STM32F103 as the FST-01, so it takes
// the FST-01's figures.
var NitrokeyStart = Profile{
	Name:       "nitrokey-start (gnuk, as fst01; docs/latency-profiles.md §7)",
	Algorithms: gnukAlgorithms,
	Sign:       gnukTimes(),
	Decipher:   gnukTimes(),
	APDU:       usbAPDU,
}

// NitrokeyPro is a Nitrokey Pro (an OpenPGP card chip; RSA only). The
// findings give it no figure: it takes the NEO's (docs/latency-profiles.md
// §7, assumed).
var NitrokeyPro = Profile{
	Name:       "nitrokey-pro (assumed as yubikey-neo; docs/latency-profiles.md §7)",
	Algorithms: []Algorithm{RSA2048, RSA4096},
	Sign:       rsaOnly(yk4RSA4096, 2*yk4RSA4096),
	Decipher:   rsaOnly(yk4RSA4096, 2*yk4RSA4096),
	APDU:       usbAPDU,
}

// Instant is a card that supports every algorithm and takes no modeled
// time: for tests of the logic.
var Instant = Profile{
	Name:       "instant (no modeled time)",
	Algorithms: []Algorithm{RSA2048, RSA4096, EdDSA25519, ECDSAP256, ECDHP256, ECDHX25519},
}

// Profiles lists the token profiles.
func Profiles() []Profile { return []Profile{YubiKey4, YubiKeyNEO, FST01, NitrokeyStart, NitrokeyPro} }

// Short returns the profile's name without its source: yubikey4,
// yubikey-neo, fst01-gnuk, … as cmd/cardsim and benchmark rows name it.
func (p Profile) Short() string {
	for i, r := range p.Name {
		if r == ' ' {
			return p.Name[:i]
		}
	}
	return p.Name
}
