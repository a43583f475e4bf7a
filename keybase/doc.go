// Package keybase reads and writes the armored key files of gnokey (gno's
// tm2 keybase) and signs with them: a gnokey-compatible key store that
// signs at in-process speed.
//
// gnokey decrypts its key on every signature, running bcrypt at cost 12
// each time, hundreds of milliseconds a sign (docs/measurements.md). A
// Signer opened here in UnlockOnce mode (the default)
// decrypts once and then signs at in-process speed; PerSign mode
// decrypts on every sign, as gnokey does, so benchmarks can show both.
// Nothing here is simulated: every stage is measured on the host.
// Package keybase/gnokeyhome reads gnokey's own key database (a gnokey
// home's data/keys.db) and signs with its keys through this package.
//
// It follows the shape every signerkit backend shares (see package
// signer): Config says where the keys are (Dir), how to unlock them
// (Secret, a signer.Secret) and which key Open opens (Key); Open opens one
// key as a *Signer; OpenStore returns the Store of a directory; ParseURI
// reads a keybase: URI, a scheme the package registers with
// signer.Register when imported.
//
// # URIs
//
// signer.Open opens a key from a URI of the keybase scheme:
//
//	keybase:dir=/var/lib/gnokey;label=validator?pin-source=env:GNOKEY_PASS
//	keybase:dir=/var/lib/gnokey;label=validator?pin-source=/run/secrets/pass&mode=per-sign
//
// Path attributes:
//
//	dir    the key directory (required)
//	label  the key's name, "<label>.key" in dir (required)
//
// Query attributes:
//
//	pin-source  where the passphrase is: env:NAME, file:/path or /path
//	            (see signer.SecretSource)
//	pin-value   the passphrase itself, for those who write it knowingly
//	mode        unlock-once (the default) or per-sign
//
// With neither pin-source nor pin-value, the Secret given to
// signer.OpenSecret is used. Errors name the attribute at fault and never
// quote a pin-value.
//
// # Format (docs/protocols.md Part C)
//
// A private key is an OpenPGP-style armor block ("TENDERMINT PRIVATE KEY",
// CRC-24 checksum) with headers "kdf: bcrypt" and "salt: <32 hex digits>",
// in any order. The key is SHA-256 of the 60-byte "$2a$12$…" bcrypt string
// of the passphrase under that salt, and the body is nonce(24) ‖
// XSalsa20-Poly1305 of the key's amino "Any" bytes (/tm.PrivKeyEd25519 or
// /tm.PrivKeySecp256k1). For an empty passphrase gnokey writes the amino
// bytes unencrypted, with no headers; older versions encrypted them under
// bcrypt of "" or SHA-256 of nothing, and both still open. EncryptArmor
// and DecryptArmor convert keys; OpenArmor signs with an exported key.
//
// gnokey always uses cost 12 and the file does not say so. A Store
// configured with another Cost (tests use 4) adds a "cost" header, which
// this package reads and gnokey ignores: such files open in gnokey only
// if written at cost 12. Costs run from MinCost (4) to MaxCost (20, about
// a minute per unlock): a file that claims more is refused as ArmorBadCost
// at once, rather than spending days in bcrypt.
//
// The salted bcrypt lives in internal/bcryptsalt, built on the bcrypt key
// schedule of golang.org/x/crypto/blowfish, because
// golang.org/x/crypto/bcrypt picks its own salt; its tests check every
// hash against bcrypt.CompareHashAndPassword. It reads the caller's
// context between rounds, so a key derivation stops at the deadline.
//
// The armor reader is stricter than the one gnokey uses
// (golang.org/x/crypto/openpgp/armor), which accepts a block with no
// checksum, checks the checksum only when the body is read to its end, lets
// a repeated header overwrite the first, and does not check that the END
// line names the BEGIN line's type. Here each of these is an *ArmorError
// with its ArmorProblem and line. Text before the block, CRLF line endings
// and white space around the BEGIN and header lines are accepted, as
// gnokey accepts them; white space around the body, checksum and END lines
// is accepted too, though gnokey's reader refuses it, so a Store keeps and
// exports every key re-armored exactly as gnokey writes it.
//
// # Store
//
// A Store is a directory (mode 0700; a directory open to other users is
// refused) with one file per key, "<name>.key" (mode 0600; see Names for
// names that are not file names): the key's
// public key block, armored as gnokey armors public keys, then its private
// key block as gnokey writes it (for armor gnokey wrote, the bytes
// ImportArmor took), so ListKeys needs no passphrase and ExportArmor
// returns armor gnokey imports.
//
// # Names
//
// gnokey (tm2/pkg/crypto/keys, v1.7.1) checks no key name: `gnokey add`
// takes any single argument, even an empty one, and `gnokey import` any
// non-empty one; the name is only a key in its leveldb ("<name>.info"),
// and a name that parses as a bech32 address is looked up as that address
// instead. This package takes every such name but the empty one (a
// signer.KeyRef needs a label), up to MaxName (1024) bytes: spaces, '/',
// leading dots, non-ASCII, control characters, bytes that are not UTF-8.
// A name that parses as an address is looked up as the address first, by
// Store.OpenKey, Store.KeyInfo, Open and a keybase: URI's label, and as a
// name only when no key has that address; Address gives a key's address.
//
// A name is mapped to a file name, which KeyFileName gives: a name of
// ASCII letters, digits, '.', '_' and '-' that starts with a letter or
// digit (at most 100 bytes, the only names earlier versions took) is its
// own file name, "<name>.key"; in any other name each other byte, and a
// leading '.', '_' or '-', is percent-encoded (%XX, upper-case hex), so
// "my key/1" is in "my%20key%2F1.key", and an encoding over 200 bytes is
// shortened and ends in "%~" and a hash of the name. No name reaches
// outside the directory or onto the store's own files, and no two share
// a file. The file of such a name also holds the name itself, escaped, in
// a "name" header of its public key block, which ListKeys shows (and
// which must give the file's name: a file renamed by hand is reported
// corrupt). Files of plain names have no such header, and read as they
// did. Names are shown as they are: quote them (%q) before showing them
// to someone deciding what to sign, since two names can look alike
// (U+2215 '∕' and '/', a bidirectional override).
//
// OpenStore creates nothing, so a mistyped directory is not left behind by
// a read: a missing directory lists no keys, opening a key in it fails
// with signer.ErrKeyNotFound, and the first key written (GenerateKey,
// ImportKey, ImportArmor) creates it, mode 0700. Besides signer's key
// store methods (GenerateKey, ImportKey, ListKeys, OpenKey, DeleteKey), a
// Store offers gnokey's own operations: ImportArmor and ExportArmor, which
// move armored keys in and out, KeyInfo, and ChangePassphrase.
//
// Files are written to a temporary file, synced, and renamed into place,
// so a reader sees the old file or the new one, whole, even across a
// crash. A temporary file a crash left behind (an encrypted copy of the
// key) is removed when its key is deleted, however fresh, and otherwise
// once it is an hour old, the next time its key is written; writers write
// their temporary file under the lock, so none present under the lock is
// a live writer's. Writers take an exclusive flock(2) on "<dir>/.lock" (waiting
// within their context's deadline), so writers in several processes
// neither lose an update nor both create one name; on systems without
// flock only writers that share one Store are serialised. Readers take no lock.
// A file whose private key does not match its public block is reported
// corrupt (signer.ErrCorrupt) when opened.
//
// # The directory and its files
//
// A Store's directory must be a real directory, not a symbolic link
// (checked on the last element of the path), mode 0700 and, on Unix,
// owned by the process's effective user; otherwise OpenStore and every
// later read and write refuse it with a *FileError wrapping
// signer.ErrPermissionDenied. Key files and the lock file are opened with
// O_NOFOLLOW|O_NONBLOCK and must be regular files: a symbolic link, FIFO,
// device or socket planted there is refused at once, so nothing in the
// directory can redirect or hang the store, and reads honour the context
// even on a hung file system. On Windows ownership and modes are not
// checked, and links are found by an Lstat before the open, which a
// racing attacker could beat. Keep the parent directories unwritable by
// other users: a parent swapped between checks is out of scope. Armor
// holds at most 8 headers, and Ed25519 public keys in key files and
// imported keys pass signer.CheckEd25519PublicKey (a small-order or
// non-canonical key, or an imported 64-byte key whose public half is not
// its seed's, is refused with signer.ErrInvalidKey).
//
// # Errors
//
// A wrong passphrase is a *PassphraseError, which names the key and wraps
// signer.ErrWrongPassphrase; it changes nothing on disk (XSalsa20-Poly1305
// cannot tell a wrong passphrase from a ciphertext altered after it was
// written; both are reported as a wrong passphrase).
// Unreadable armor is an *ArmorError (signer.ErrCorrupt, or
// signer.ErrUnsupported for an unknown kdf); a key of another type, such
// as a multisig, is a *KeyTypeError (signer.ErrUnsupported). Missing and
// taken names wrap signer.ErrKeyNotFound and signer.ErrKeyExists, bad
// names signer.ErrInvalidArgument. Passphrases and key bytes never appear
// in errors.
//
// # Secrets
//
// Passphrases come through a signer.Secret (Config.Secret, or OpenArmor's
// argument), whose result the package wipes once the key is derived;
// signer.SecretBytes serves one from a slice the caller wipes.
// Decrypted key bytes are wiped after use, and an
// UnlockOnce Signer's key on Close. Ed25519 keys are expanded and signed
// with signerkit's own RFC 8032 code, not crypto/ed25519, whose
// process-wide key cache keeps every key passed to Sign, seed included,
// beyond any wipe: after Close, or after each PerSign sign, the tests find
// no copy of the seed anywhere in the process's memory. Copies out of
// reach may still remain for secp256k1 (in the secp256k1 package's working
// values) and on stacks the runtime moved; the process's memory is the
// boundary.
//
// # Concurrency
//
// Store and Signer are safe for concurrent use. A Signer's signs run
// in parallel (in PerSign mode each runs its own key derivation); Close
// waits for those in flight.
package keybase
