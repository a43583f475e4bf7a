// Package cardsim simulates an OpenPGP card (the OpenPGP card application,
// specification v3.4) for tests and benchmarks of package openpgpcard, and,
// through cmd/cardsim and vpcd, for GnuPG, OpenSC and ykman.
//
// A Card keeps the application's state: its data objects (AID, historical
// bytes, application related data 6E, key attributes C1–C3, fingerprints,
// generation times, PW status bytes C4, cardholder data, the signature
// counter), the passwords PW1 and PW3 with their retry counters (three
// tries; a wrong one answers 63Cx, the last blocks the password with 6983,
// which RESET RETRY COUNTER under PW3 lifts for PW1), and three keys:
// RSA 2048/4096, ECDSA P-256, EdDSA Ed25519, and ECDH P-256 or Curve25519 in
// the decryption slot. It answers SELECT, VERIFY, CHANGE REFERENCE DATA,
// RESET RETRY COUNTER, GET DATA, PUT DATA, GENERATE ASYMMETRIC KEY PAIR,
// PSO:COMPUTE DIGITAL SIGNATURE, PSO:DECIPHER, INTERNAL AUTHENTICATE, SELECT
// DATA, GET CHALLENGE and GET RESPONSE, in short and extended APDUs and in command
// chains (CLA 0x10), with the status words of the specification: 6982 for a
// command whose PIN is not verified, 6A88 for a missing key or data object,
// 6A80 for attributes the token does not take, 6700 for a malformed APDU,
// 6D00 and 6E00 for unknown instructions and classes. PUT DATA with the odd
// instruction imports a key by extended header list (RSA, Ed25519 and P-256
// keys; a Curve25519 ECDH key gets 6A81), as GnuPG's keytocard sends it;
// ImportKey does the same from Go.
//
// Transmit is the logic alone. Transport (and Dialer) is the reader face
// package openpgpcard uses: each exchange spends the Profile's modeled time
// — the exchange itself as signertrace.StageWire, the key operation as
// signertrace.StageDevice — on the caller's trace. Profiles YubiKey4,
// YubiKeyNEO, FST01, NitrokeyStart and NitrokeyPro take their figures from
// docs/latency-profiles.md §7, which names the source, or the assumption,
// behind each; a profile's Algorithms are the attributes that token accepts
// (a YubiKey 4 refuses Ed25519 with 6A80). In accounted time (the default)
// the modeled time is only reported; with simtime.Realtime
// (SIGNERKIT_SIM=realtime through simtime.ModeFromEnv) it is slept too.
//
// Faults: Remove and Insert pull the card and put it back, Inject
// (FaultRemove) pulls it in the middle of a command, and Hang stops it
// answering until released.
package cardsim
