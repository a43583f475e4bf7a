// Package openpgpcard signs with a key on an OpenPGP card — a YubiKey, a
// Nitrokey, an FST-01 running Gnuk, any card implementing the OpenPGP card
// application (specification v3.4) — speaking its APDUs over PC/SC.
//
// A Signer is one of the card's three keys: the signature key (sig,
// PSO:COMPUTE DIGITAL SIGNATURE), the authentication key (aut, INTERNAL
// AUTHENTICATE) or the decryption key (dec, PSO:DECIPHER, through
// crypto.Decrypter). It signs with Ed25519 (the card signs the whole
// message, at most MaxEdDSAMessage bytes), ECDSA P-256 (the card signs the
// SHA-256 digest) or RSA 2048/4096 with PKCS #1 v1.5 (the card pads the
// DigestInfo; PSS is refused with signer.ErrUnsupported). SignContext
// verifies every signature under the public key before returning it.
//
// Open selects the application, reads the key's attributes (C1–C3) and
// public key, so Public does no I/O, and verifies PW1 from Config.PIN. A
// card whose PW1 status byte is 00 wants PW1 again before each signature;
// the Signer sends it. Long commands are sent with extended length when the
// card's historical bytes announce it, else with command chaining; long
// responses are gathered with GET RESPONSE. A wrong PIN is a *StatusError
// wrapping signer.ErrWrongPassphrase that tells the tries left; a blocked
// one wraps signer.ErrDeviceLocked. A card removed mid-command fails that
// command with signer.ErrDisconnected, and the next command dials again, so
// a card put back is used again.
//
// Generate and Store.GenerateKey make a key on the card with PW3
// (Config.AdminPIN); Import puts an existing key there with PUT DATA's
// key import (an extended header list). They do not write the OpenPGP
// fingerprint and timestamp data objects: those belong to the OpenPGP key
// that GnuPG builds around the card's key.
//
// PC/SC is pcsc-lite's libpcsclite.so.1, loaded at run time through cgo on
// Linux, so a build needs no pcsc-lite headers. Without cgo, or outside
// Linux, PCSCDialer fails with ErrNoPCSC, which wraps
// signer.ErrUnsupported; Config.Dial can still give any other Transport.
//
// The openpgpcard: URI scheme (see ParseURI) opens a key through
// signer.Open and the card as a store through signer.OpenStore:
//
//	openpgpcard:key=sig?pin-source=env:CARD_PIN
//
// Package cardsim simulates the card, with the latency profiles of
// docs/latency-profiles.md §7; docs/openpgpcard.md shows GnuPG and OpenSC
// using it through vpcd.
package openpgpcard
