package threshold

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/threshold/dkls23"
	"github.com/signerkit/signerkit/threshold/frost"
)

// Frame types of the DKLS23 key generation, between participants (the
// hello is typeDKGHello, as in RunDKG's).
const (
	typeDKLSKeygen1 byte = 24 // dkls23 keygen round-1 message
	typeDKLSKeygen2 byte = 25 // dkls23 keygen round-2 message: holds a Shamir share
)

// RunDKLS23DKG runs this participant's part of a t-of-n DKLS23 key
// generation on secp256k1 (dkls23.NewKeygen) with its peers, over the same
// mutual TLS 1.3 connections between each pair as RunDKG, and returns its
// share. cfg is as for RunDKG: cfg.ID is the participant's index 1 … N,
// and the ceremony identifier, T and N are bound into the key
// generation's session identifier, so a message made for another
// ceremony, or another threshold, fails the others' checks. The round-2
// messages carry Shamir shares; each goes only over its pairwise
// connection. A participant whose message does not decode or fails a
// check (a commitment it does not open, a share inconsistent with its
// commitments, an echo of other round-1 commitments, a frame of the wrong
// type) is named in a *dkls23.AbortError. All participants must call it at
// about the same time; it retries dialing until ctx ends, and closes
// cfg.Listener once every peer is connected.
func RunDKLS23DKG(ctx context.Context, cfg DKGConfig) (*dkls23.Share, error) {
	if err := checkDKLS23DKGConfig(cfg); err != nil {
		return nil, err
	}
	k, err := dkls23.NewKeygen(dklsDKGSession(cfg), int(cfg.ID), cfg.T, cfg.N, rand.Reader)
	if err != nil {
		return nil, err
	}
	out, err := k.Round1()
	if err != nil {
		return nil, err
	}
	peers, closePeers, err := openDKGPeers(ctx, cfg)
	defer closePeers()
	if err != nil {
		return nil, err
	}
	in, err := dklsDKGExchange(peers, typeDKLSKeygen1, out)
	if err != nil {
		return nil, err
	}
	out, err = k.Round2(in)
	if err != nil {
		return nil, err
	}
	in, err = dklsDKGExchange(peers, typeDKLSKeygen2, out)
	wipeMessages(out)
	defer wipeMessages(in)
	if err != nil {
		return nil, err
	}
	return k.Finish(in)
}

// checkDKLS23DKGConfig refuses what checkDKGConfig does, a ceremony
// identifier that is empty or longer than frost.MaxCeremonyID, and peers
// that are not the participants 1 … N other than cfg.ID.
func checkDKLS23DKGConfig(cfg DKGConfig) error {
	if err := checkDKGConfig(cfg); err != nil {
		return err
	}
	if len(cfg.Ceremony) == 0 || len(cfg.Ceremony) > frost.MaxCeremonyID {
		return fmt.Errorf("threshold: DKGConfig.Ceremony of %d bytes, want 1 to %d: %w", len(cfg.Ceremony), frost.MaxCeremonyID, signer.ErrInvalidArgument)
	}
	if cfg.ID < 1 || int(cfg.ID) > cfg.N {
		return fmt.Errorf("threshold: DKGConfig.ID %d is not a participant 1 to %d: %w", cfg.ID, cfg.N, signer.ErrInvalidArgument)
	}
	for _, p := range cfg.Peers {
		if p.ID < 1 || int(p.ID) > cfg.N {
			return fmt.Errorf("threshold: DKG peer %d is not a participant 1 to %d: %w", p.ID, cfg.N, signer.ErrInvalidArgument)
		}
	}
	return nil // repeated peers: dkgPeers refuses them
}

// dklsDKGSession is the session identifier of a DKLS23 key generation:
// a hash of the scheme, T, N and the ceremony identifier.
func dklsDKGSession(cfg DKGConfig) []byte {
	h := sha256.New()
	h.Write([]byte("signerkit threshold dkls23-secp256k1 dkg v1\x00"))
	h.Write(binary.BigEndian.AppendUint16(nil, uint16(cfg.T)))
	h.Write(binary.BigEndian.AppendUint16(nil, uint16(cfg.N)))
	h.Write([]byte{byte(len(cfg.Ceremony))})
	h.Write(cfg.Ceremony)
	return h.Sum(nil)
}

// dklsDKGExchange sends each peer its message of out (by index) in a
// frame of type typ and returns the peers' messages by index. A peer's
// frame of another type is blamed on it in a *dkls23.AbortError.
func dklsDKGExchange(peers map[frost.Identifier]*dkgPeer, typ byte, out map[int][]byte) (map[int][]byte, error) {
	in := map[int][]byte{}
	for _, p := range sortedPeers(peers) {
		b, err := p.exchange(typ, out[int(p.ID)])
		var de *frost.DKGError
		if errors.As(err, &de) {
			return in, &dkls23.AbortError{Party: int(p.ID), Reason: de.Reason}
		}
		if err != nil {
			return in, err
		}
		in[int(p.ID)] = b
	}
	return in, nil
}

// wipeMessages clears the messages of m (round 2's hold Shamir shares).
func wipeMessages(m map[int][]byte) {
	for _, b := range m {
		clear(b)
	}
}
