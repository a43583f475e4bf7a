// Package guard keeps a validator from double signing, whatever signer it
// uses: a Guard wraps any signer.Signer, reads every request as consensus
// sign bytes (package signbytes: gno tm2 or CometBFT), and signs only what
// CometBFT's FilePV would, keeping its state durably on disk.
//
// # Rules
//
// The state is kept per chain id: the last height, round and step signed
// (proposal 1, prevote 2, precommit 3), with those sign bytes and their
// signature. A request below it is refused with a *DoubleSignError. At the
// same height, round and step, identical bytes get the stored signature
// without the wrapped signer being called, and a vote or proposal that
// differs only in its timestamp (a node that crashed after signing and
// built the message again) gets the stored signature with the earlier
// timestamp, which the caller puts back into its message; anything else
// there is refused. These are the rules of CometBFT v0.38's privval FilePV,
// which gno's tm2 applies too. Every refusal wraps signer.ErrDoubleSign.
//
// SignBytes returns the whole outcome (Signed); SignConsensus does the
// same for a signbytes.Message the caller already holds, encoding it
// once instead of parsing bytes. Both make a Request (NewRequest,
// ParseRequest), which SignRequest signs: a caller that needs the parsed
// fields before it signs (a native-protocol server checking the chain)
// parses once and signs the Request. A key that implements RequestSigner
// is handed the Request, so it knows the chain and phase it signs without
// parsing. SignContext and Sign, the
// signer.Signer methods, return a signature only over the bytes asked for,
// and a *TimestampError, carrying the earlier timestamp and signature, in
// the timestamp-only case.
//
// # Durability
//
// A signature leaves the Guard only after the new state is on disk. Each
// chain has one state file of two fixed 4 KiB slots; a sign writes the
// older slot in place and syncs the file once (fdatasync on Linux), with no
// rename, no temporary file and no directory sync on the signing path. Each
// slot carries a sequence number and a CRC-32C. A new state file is
// written whole to a temporary name, synced, linked into place and the
// directory synced, so that neither the file nor its name is lost to a
// power cut.
//
// If a write or sync fails (a full disk, an I/O error), the signature is
// dropped and the chain refuses every request with a *StorageError until
// the Guard is closed and opened again, since after a failed sync what
// reached the disk is only known by reading it back.
//
// # Shared state
//
// With Config.Store the state is not in files but in a Store, which
// Guards on several hosts share (package guard/etcdstore keeps it in
// etcd). A signature is released only after the Store committed the new
// state in one compare-and-swap against the version the Guard read; a
// Guard that loses the swap to another takes the state that won and
// applies the rules again, so the same bytes get the stored signature
// and a conflicting message is refused. A Store that fails (*StoreError)
// refuses the sign without sticking: the next request reads the state
// again. Repair and Inspect are for state files only.
//
// # Damage
//
// A state file that is damaged, truncated or not a state file gives a
// *CorruptError (wrapping signer.ErrCorrupt), and the Guard signs nothing
// for its chain and never writes to the file. That includes one slot that
// fails its checks beside an intact one. A write torn by a power cut
// looks like that, but so does the newest state damaged on disk after its
// signature was released, and then the intact slot is the state before
// it: signing from it could sign a second, conflicting vote at the same
// height, round and step. The two cannot be told apart from the file, so
// both are refused; the error names the damaged slot. (A process killed
// with SIGKILL does not tear a write: only a power cut or a failing disk
// does.)
//
// Inspect reads what each slot holds without locking the file, so it
// works beside a running Guard. Repair is the way back, for an operator
// who has found on the chain the last height the validator signed: it
// keeps a copy of the damaged file and starts the chain again at a height
// above that one and above any height the file reads.
//
// # Starting and migrating
//
// With Config.AutoInit a chain without a state file starts at height 0, as
// a new FilePV does. Without it, the default, such a chain is refused with
// ErrNoState until Init gives it a state: Init(ctx, chainID, h) makes the
// Guard sign nothing below height h. To move a validator from another
// signer, stop the old one and Init at one more than the last height it
// may have signed, or Import its last signed message and signature
// (package guard/migrate reads them from FilePV's, tmkms's and horcrux's
// state files): the Guard then signs only what comes after it, and serves
// that message again as FilePV would.
//
// On systems with flock(2), a Guard holds an exclusive lock on each state
// file it has open, so a second process (or Guard) on the same directory
// is refused rather than signing from the same state.
//
// # Concurrency
//
// A Guard is safe for concurrent use. Requests for one chain are served one
// at a time, each holding the chain's lock through the wrapped signer's
// sign and the state sync; a request waiting for the lock gives up when its
// context ends. So several sentries sending the same height, round and step
// at once get the identical signature, from one sign by the wrapped signer.
// Chains do not wait for each other.
//
// # Vote extensions
//
// A CometBFT v0.38 vote extension is signed only when the chain's last
// signed message is the precommit for a block at the same height and round,
// so sign the precommit first, then its extension, or both together with
// SignWithExtension: the key signs the extension concurrently with the
// precommit (one round trip for a remote or threshold key, not two), and
// the extension's signature is released only once the precommit is signed
// and its state synced, dropped if the precommit is refused or fails.
// Extensions change no state and cost no sync. The last extension signed is kept in memory, so
// the sentries that each forward the precommit get its extension's
// signature again without a second backend sign. (FilePV signs extensions
// without any check; they are not slashable, but a signer that signs
// whatever it is sent is a signing oracle.)
//
// Config.WriteAhead is for a key whose sign is a round trip to other hosts
// (a threshold group): the new vote's record, its sign bytes without the
// signature, is written while the key signs, and the signature is
// released once the record is durable. A request after a restart for the
// recorded bytes (or for them with another timestamp) has the key sign
// the recorded bytes again.
package guard
