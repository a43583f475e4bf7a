// Package threshold signs with an Ed25519 key split among several
// machines, any t of which sign together (2 of 3, say), using FROST
// (package frost, RFC 9591). The signatures are ordinary Ed25519
// signatures under the key's public key, so a validator's key can be
// split without changing anything on chain.
//
// # Parties and the coordinator
//
// Each share lives in a Party, a server that serves any net.Listener with
// mutual TLS 1.3 (crypto/tls; the party requires a client certificate from
// its configured CA or pinned keys, and then one of the coordinators it
// pins by name or key, PartyConfig.Coordinators: a certificate that merely
// chains to the CA, such as another party's, is refused, so a compromised
// party cannot ask the others for shares). Coordinators should have their
// own identities, ideally their own CA; a certificate good for server
// authentication is never admitted by name. The coordinator, Signer, is the
// validator's signer.Signer: for each signature it picks t parties, sends
// each one request carrying the message, the nonce handle of one of that
// party's commitments and the other signers' commitments, and gets back a
// 32-byte signature share. That is one round trip, to the t parties in
// parallel, because the first FROST round (nonce commitments) is done
// ahead: the Signer keeps a pool of each party's commitments, refilled in
// the background over a second connection, so presigning never waits
// behind a sign or the other way round.
//
// The Signer may hold a share itself (Config.Local), as a horcrux cosigner
// does; it then signs with one remote party per signature. That mode is
// the one to benchmark for a validator: one network round trip to the
// nearest party, with the local share computed meanwhile.
//
// # Failures
//
// A party that cannot be reached, answers with an error, or has not
// answered after PartyTimeout is routed around: the sign is tried again
// with another set of parties, and the party is avoided for a back-off
// period. A party slower than the hedge delay (Config.HedgeAfter) gets a
// second set asked in parallel, and the first complete answer wins. A
// share that fails verification is identified (verify_signature_share,
// RFC 9591 section 5.4): the party is avoided for a minute, counted in
// PartyStats.BadShares, and never part of a signature returned; every
// signature is verified before it is returned. SignContext returns within
// its context's deadline with an error wrapping ctx.Err().
//
// Each party uses a nonce pair at most once, even across crashes: its
// frost.NonceStore marks the pair consumed on disk, synced, before it
// computes the share. A pair whose commitment the coordinator drops unused
// (a failed attempt, a party caught sending a bad share, the pools at
// Close) is released: the coordinator asks the party to mark it consumed,
// durably, which frees its slot. Close first waits for the share requests
// still in flight (which it ends) and for a refill already sent (whose
// answer it awaits, within PartyTimeout), so that their pairs are
// released too, and sends no refill once it has begun. A presign that
// fails (a party slower than PartyTimeout still makes and keeps the
// pairs) is followed by one that asks the party for its outstanding pairs too, as the first presign
// does: the coordinator keeps those it does not hold already (in its pool,
// in a request, or to release), so none is handed out twice, and drops
// from its pool those the party no longer holds. After a presign that
// times out the coordinator asks for half the batch (down to 16), and
// after quick answers for twice as many again, so a slow party still
// fills the pool. Pairs whose commitments were lost otherwise are
// reclaimed by the party when its store is full, once older than
// PartyConfig.ReclaimAfter; a full store makes presign fail with a
// *frost.NonceStoreFullError rather than answer nothing. A party serving
// several coordinators remembers which one (by its certificate's key) it
// handed each pair to, and lists a coordinator's own outstanding pairs
// only, so one never holds a pair another may use or release; pairs the
// party knows no owner of (loaded from its file after a restart) go to
// the first coordinator that asks. A pair found used anyway
// (frost.ErrNonceUsed: reclaimed by age, or lost in a party's restart) is
// not the party's fault: the coordinator forgets that party's pool, fills
// it again from the party's list of its outstanding pairs, and the sign
// tries again, the same party allowed, so that with one party down the
// other two still sign.
// Party.NonceStats and Signer.Stats (Released, Dropped) show the counts. A party may also put a double-sign guard (package
// guard) in front of its share (PartyConfig.Guard): it then refuses
// conflicting consensus sign bytes by itself, and the Signer returns an
// error wrapping signer.ErrDoubleSign without trying other parties.
//
// # Wire
//
// Inside TLS, frames of an 8-byte header and a body (see wire.go). For a
// 2-of-3 sign each party receives 75 bytes plus the message and returns 32
// bytes. Signer.Stats and Party.Counters count the frame bodies (payload)
// and the bytes under TLS (wire) per party; the sign and presign
// connections are counted apart.
//
// # Hooks for tests and benchmarks
//
// Config.Dial makes the raw connections and Party.Serve takes any
// net.Listener, so a network shaper can wrap both ends. Signer.Presign
// presigns on demand. RunDKG runs one participant of a distributed key
// generation over mutual TLS connections between the participants (its
// DKGConfig takes a Dial and a Listener too); frost.RunDKG runs all of
// them in one process. Package thresholdtest starts parties on loopback
// with an ephemeral CA.
//
// # Key generation
//
// A key comes from a trusted dealer (frost.SplitSeed, to split an existing
// validator key) or from RunDKG, where no machine ever holds the whole
// key. In RunDKG each pair of participants has its own TLS connection, so
// the secret shares of round 2 are seen by their recipient only; after
// round 1 every participant sends every other a hash of all the round-1
// packages it got, so a participant that sent different packages to
// different peers is caught before any share is sent. The proofs of
// knowledge bind the ceremony (DKGConfig.Ceremony, t and n), so a round-1
// package from another key generation is refused. The DKG's certificates
// are good for both ends of a connection: issue them from a CA that the
// parties do not admit coordinators with, or under names no Coordinators
// entry matches. A DKLS23 secp256k1 key is dealt by dkls23.Deal or made by
// RunDKLS23DKG over the same pairwise connections, bound to the same
// ceremony id.
//
// # Files, and the threshold: scheme
//
// A deployment keeps a key in files (see docs/threshold.md for the
// operator's guide). A share file (MarshalShare, ParseShare, LoadShare)
// holds a participant's key package and the key's public key package as
// two PEM blocks, checked against each other when read; a public key file
// (MarshalPublic, LoadPublic) holds the public key package alone.
// WriteShareFiles writes a dealt or generated key, and WriteCerts a CA and
// the parties' and coordinators' certificates, every file mode 0600 and
// none overwritten. ExportShare and ImportShare encrypt a share file under
// a passphrase for a backup (scrypt and XChaCha20-Poly1305); a wrong
// passphrase is signer.ErrWrongPassphrase, and a damaged file
// signer.ErrCorrupt, through *ShareFileError.
//
// A coordinator's config is a TOML file (CoordinatorFile) that names the
// public key file, its certificate and key, the CA or pins of the parties,
// the parties and optionally a local share; a party's (PartyFile, which
// package partyd serves) names its share, certificate, the coordinators it
// admits, its state directory and the chains it signs for. Both are read
// strictly: an unknown key, a missing file or one that does not fit the
// key is a *ConfigFileError naming the key at fault. Importing this package
// registers the URI scheme threshold: with signer.Register:
//
//	threshold:config=/etc/signerkit/threshold.toml
//
// opens the coordinator that file describes (OpenFile), so the daemon and
// any caller of signer.Open take a threshold key as any other; CheckURI
// checks one without dialing the parties.
//
// # A secp256k1 key: DKLS23
//
// The same machinery serves a secp256k1 key split with DKLS23 (package
// dkls23), a gno or Cosmos account key: DKLS23Party serves a share over
// the Party's listener, TLS 1.3 and coordinator pins (through a handler
// hook in Party), and DKLS23Signer, the coordinator, is a signer.Signer
// for signer.ECDSASecp256k1 (SHA-256, 64-byte r‖s, low S). The coordinator
// must hold a share of its own (DKLS23Config.Local): DKLS23's presigning
// needs a confidential channel between the two signers, which the
// coordinator's mutual TLS connection to the other party is when the
// coordinator is one of them. A presignature is made with one party ahead
// (two requests: the coordinator's round-1 message answered with the
// party's rounds 1 and 2, then the coordinator's round 2), both sides
// keeping their half in memory under a random 16-byte id; a sign is one
// request, the id and the hash, answered with the party's share. The
// party deletes its half before it answers, so a presignature signs one
// message at most, even under concurrent or replayed requests; a restart
// loses the halves, which costs a retry. A party that answers wrongly is
// named by a *DKLS23PartyError; with no party able to sign, a sign fails
// with a *NoSignerError within its deadline. Config files say
// scheme = "dkls23-secp256k1" (DKLS23PartyFile, DKLS23CoordinatorFile);
// a threshold: URI opens either scheme.
//
// # Concurrency
//
// Signer and Party are safe for concurrent use. A Signer serves any number
// of signs at once over one connection per party; a Party serves any
// number of connections and requests at once.
package threshold
