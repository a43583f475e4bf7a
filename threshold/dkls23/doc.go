// Package dkls23 is threshold ECDSA on secp256k1 after Doerner, Kondi,
// Lee and shelat, "Threshold ECDSA in Three Rounds" (IACR ePrint
// 2023/765, "DKLS23"): t of n parties, each holding a Shamir share of the
// key, make a standard ECDSA signature (low S, as Cosmos and gno require)
// without the key ever being in one place. It is written from the paper
// and the papers it builds on; no other implementation's code is in it.
//
// # Protocol
//
//   - Key generation (NewKeygen, two rounds): a Feldman-verifiable Shamir
//     DKG with commit-then-open, an echo of the commitments and proofs of
//     knowledge, plus, for every ordered pair of parties, 128 base
//     oblivious transfers (Chou–Orlandi with a proof of knowledge of the
//     sender's key) that seed every later multiplication between them.
//   - Presigning (NewPresign, Round2, Finish: rounds 1 and 2 of DKLS23
//     Protocol 3.6), independent of the message: each pair of signers runs
//     two random vector OLEs (Functionality 3.5), realised by DKLs19's
//     OT-based multiplication on a KOS15 OT extension, with the consistency
//     checks that bind them to each party's committed nonce and public key
//     share. Its result, a Presignature, signs one message.
//   - Signing (Presignature.Sign, round 3): one message per party; Combine
//     adds the shares, normalises to low S and verifies before returning.
//
// Parameters: κ = 128 base OTs, 416 extended OTs per multiplication (256
// + 2·80, statistical parameter 80), KOS15's check with 192 extra OTs.
//
// # Security model, and what is not implemented
//
// The protocol is secure with abort against a malicious minority of the
// signing set in the random oracle model, as the paper shows, given
// authenticated and confidential point-to-point channels: key generation's
// round 2 carries Shamir shares in clear, so messages must travel over
// mutual TLS or the like. Every check the protocol makes that can blame a
// party returns an *AbortError naming it (a message that does not decode
// included, wrapping an *EncodingError); a failure only the final
// signature reveals (a wrong ψ or last-round share) aborts without a name,
// as in the paper. Deviations and omissions:
//
//   - The additive key shares are λ_i·p(i), without the fresh shares of
//     zero Protocol 3.6 adds at each signing.
//   - Alice's multiplication check sends a SHA-256 digest of her check
//     vector rather than the vector (Bob recomputes it), saving 13 KB per
//     multiplication.
//   - The base OT is Chou–Orlandi's "simplest OT" with a proof of
//     knowledge, as DKLs19 uses; its known weaknesses in the UC setting
//     are not addressed here.
//   - Scalar multiplications use decred's variable-time routines: timing
//     side channels are out of scope.
//   - No key refresh, no identifiable abort beyond the checks above, no
//     storage of shares (Share.MarshalBinary gives the bytes) and no
//     networking here: the caller moves the messages (each is a []byte
//     with a fixed length); package threshold carries them over mutual
//     TLS (DKLS23Party, DKLS23Signer) and keeps share files. Deal runs
//     the key generation for every party in one process, as a trusted
//     dealer.
//
// Every session must carry a session id common to its parties; the
// multiplications' freshness does not rely on it (each side adds a nonce
// of its own), but commitments are bound to it.
package dkls23
