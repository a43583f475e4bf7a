// Package gnokeyhome reads gnokey's own key database, read-only, and signs
// with its keys: a gnokey user's keys, as `gnokey list` shows them, with
// no export and import one by one.
//
// gnokey (gno v1.7.1, tm2/pkg/crypto/keys) keeps its keys in
// "<home>/data/keys.db", a goleveldb database: one record per key,
// "<name>.info", the amino encoding of the key's description, and an
// index, "<address>.address", that gives each address's record. A local
// key's record holds its private key armored and encrypted as `gnokey
// export` writes it (bcrypt, then XSalsa20-Poly1305), which package
// keybase decrypts; the other kinds (Ledger, offline, multisig) hold no
// private key and are listed, not opened.
//
// This package is apart from keybase so that a program that reads key
// files only does not link goleveldb.
//
// It follows the shape every signerkit backend shares (see package
// signer): Config says which home (Home), how to unlock its keys (Secret)
// and which key Open opens (Key); Open opens one key as a *Signer
// (keybase's, which signs as gnokey does: Ed25519, or secp256k1 over
// SHA-256, low-S); OpenStore returns the Store of a home, which lists
// (ListKeys, and Keys for every kind with addresses), describes (KeyInfo)
// and opens (OpenKey) keys, and writes nothing, not even goleveldb's
// LOCK file (see below); ParseURI reads a gnokeyhome: URI, a scheme the
// package registers with signer.Register when imported.
//
// # URIs
//
//	gnokeyhome:home=/home/val/.config/gno;label=validator?pin-source=env:GNOKEY_PASS
//	gnokeyhome:label=g1jg8mtutu9khhfwc4nxmuhcpftf0pajdhfvsqf5?pin-source=/run/secrets/pass&mode=per-sign
//
// Path attributes: home, gnokey's home (optional; by default gnokey's own:
// $GNOHOME, else ~/.config/gno on Linux), and label, the key's gnokey
// name or its address (required). Query attributes: pin-source or
// pin-value for the passphrase, and mode, unlock-once (the default) or
// per-sign, as for keybase: URIs.
//
// # Names and addresses
//
// gnokey takes any string as a key's name (spaces, '/', non-ASCII, even
// an empty one), and so does this package: a name is only a key in the
// database. A label that parses as a gno.land address ("g1…") selects the
// key of that address, by gnokey's index; only when the index has no such
// address is it taken as a name (gnokey would not find that key at all).
// In a URI, percent-encode the characters a URI cannot hold as they are
// (label=my%20key). The empty name, which gnokey `add` accepts, cannot be
// selected: a signer.KeyRef needs a label.
//
// # Read-only, and gnokey's lock
//
// The database is opened read-only (goleveldb's ReadOnly option) for the
// time of each method's read, and closed after, as gnokey opens it for
// each command. Open and OpenKey read the record, close the database,
// then derive the key, so a Signer holds nothing of the home. No file is
// created, changed or removed, LOCK included (TestReadOnly,
// TestReadOnlyDir).
//
// gnokey's lock is goleveldb's, on the database's LOCK file: exclusive
// for gnokey, which holds it for each command (a write lasts about one
// key derivation, a fraction of a second), and shared for readers here.
// goleveldb creates LOCK at a database's first open and never removes
// it, so a database that has one is read under the shared lock. A read
// that finds the lock taken waits, retrying, until the caller's context
// is done or Config.LockWait (5 s by default) has passed, and then fails
// with a *LockedError (signer.ErrBusy, and the context's error when that
// ended the wait). It does not read a copy of the files instead: files
// copied while gnokey writes need not agree.
//
// A database without LOCK (a copied or backed-up home, where no gnokey
// has run since) is read without a lock, through files opened read-only:
// goleveldb's own read-only open would create LOCK to lock it, a write
// to the copy that fails on a read-only mount. Should LOCK appear by the
// end of such a read (a gnokey opened the database meanwhile), the read
// is made again, under the lock.
//
// The other way round, gnokey does not wait: a gnokey command that starts
// while a read here holds the shared lock (about a millisecond per read,
// BenchmarkKeyInfo) fails with "resource temporarily unavailable", as it
// does when another gnokey holds the database, and can be run again.
//
// Nothing here checks the home's owner or modes: gnokey creates keys.db
// with mode 0755 and its files 0644, so its local keys are protected by
// their passphrase, not by the file system. A key stored under an empty
// passphrase is stored unencrypted and opens with a Secret that returns
// an empty passphrase. goleveldb keeps what it reads in its own buffers,
// which no wipe reaches; the records this package decodes are wiped.
//
// # Errors
//
// A wrong passphrase is a *keybase.PassphraseError whose Label is the
// key's name (signer.ErrWrongPassphrase). A key that cannot sign (Ledger,
// offline, multisig) is a *KindError (signer.ErrUnsupported). A record
// that is not what gnokey writes is a *RecordError (signer.ErrCorrupt,
// or signer.ErrUnsupported for a type gnokey v1.7.1 does not write); a
// name that has no record wraps signer.ErrKeyNotFound. Keys and
// ListKeys return the keys they could read with the errors of the records
// they could not.
//
// # Concurrency
//
// Store and Signer are safe for concurrent use; several Stores, in one
// process or several, read a home at once (the lock is shared, when
// there is one).
package gnokeyhome
