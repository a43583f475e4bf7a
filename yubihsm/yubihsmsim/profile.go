package yubihsmsim

import (
	"time"
)

// Profile is the latency model of a device: how long each signing
// operation keeps the device busy. Commands without a published figure
// (session setup, Echo, key management) are modeled as taking no device
// time.
type Profile struct {
	// Name names the profile and its source; it travels in the
	// X-Signerkit-Modeled response header and ends up in
	// signertrace.StageInfo.Profile.
	Name string
	// EdDSA is the Sign EdDSA time at message sizes in bytes, in rising
	// order; sizes between points are interpolated linearly and sizes
	// beyond the ends extrapolated along the nearest segment.
	EdDSA []Point
	// ECDSAP256 is the time of one Sign ECDSA with a P-256 key.
	ECDSAP256 time.Duration
	// ECDSAP384 is the time of one Sign ECDSA with a P-384 key.
	ECDSAP384 time.Duration
	// ECDSASecp256k1 is the time of one Sign ECDSA with a secp256k1 key.
	ECDSASecp256k1 time.Duration
	// RSA2048, RSA3072 and RSA4096 are the times of one Sign PKCS1 or
	// Sign PSS with an RSA key of that size.
	RSA2048, RSA3072, RSA4096 time.Duration
	// HMACSHA256 is the time of one Sign or Verify HMAC with SHA-1 or
	// SHA-256, HMACSHA512 with SHA-384 or SHA-512.
	HMACSHA256, HMACSHA512 time.Duration
}

// Point is one measured figure of a Profile.
type Point struct {
	// Size is the message size in bytes.
	Size int
	// Time is how long the device takes to sign a message of Size bytes.
	Time time.Duration
}

// YubiHSM2 is the profile of a YubiHSM 2 from Yubico's product overview
// ("example metrics from an otherwise unoccupied YubiHSM 2"), as quoted in
// docs/latency-profiles.md §2 and docs/protocols.md B.9. Whether the vendor figures
// include USB, connector or session overhead is not stated; the simulator
// models them as device time.
var YubiHSM2 = Profile{
	Name: "yubihsm2 (docs/latency-profiles.md §2)",
	EdDSA: []Point{
		{32, 105 * time.Millisecond},
		{64, 121 * time.Millisecond},
		{128, 137 * time.Millisecond},
		{256, 168 * time.Millisecond},
		{512, 229 * time.Millisecond},
		{1024, 353 * time.Millisecond},
	},
	ECDSAP256: 73 * time.Millisecond,
	ECDSAP384: 120 * time.Millisecond,
	// Yubico publishes no secp256k1 figure: the sim takes P-256's, a
	// curve of the same size (docs/latency-profiles.md §2).
	ECDSASecp256k1: 73 * time.Millisecond,
	// Yubico's RSA figures are for PKCS#1 v1.5 (with SHA-256, -384 and
	// -512 by size); PSS, unpublished, is modeled the same.
	RSA2048: 139 * time.Millisecond,
	RSA3072: 504 * time.Millisecond,
	RSA4096: 852 * time.Millisecond,
	// HMAC-SHA-(1/256) and HMAC-SHA-(384/512) in Yubico's table.
	HMACSHA256: 4 * time.Millisecond,
	HMACSHA512: 243 * time.Millisecond,
}

// NoLatency models every operation as instant, to measure the host's own
// cost.
var NoLatency = Profile{Name: "none"}

// EdDSATime returns the modeled time of signing an n-byte message.
func (p *Profile) EdDSATime(n int) time.Duration {
	pts := p.EdDSA
	switch len(pts) {
	case 0:
		return 0
	case 1:
		return pts[0].Time
	}
	i := 1
	for i < len(pts)-1 && n > pts[i].Size {
		i++
	}
	a, b := pts[i-1], pts[i]
	d := a.Time + time.Duration(float64(b.Time-a.Time)*float64(n-a.Size)/float64(b.Size-a.Size))
	return max(d, 0)
}
