package threshold

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"

	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/threshold/dkls23"
)

// DKLS23PartyConfig configures a DKLS23Party.
type DKLS23PartyConfig struct {
	// Share is the party's share of the secp256k1 key.
	Share *dkls23.Share
	// TLS and Coordinators are as in PartyConfig: the party's certificate,
	// the CA pool or callback that admits clients, and the coordinators it
	// serves, by name or pinned key.
	TLS          *tls.Config
	Coordinators []string
	// MaxPresignatures bounds the presignatures the party holds, made or
	// in the making, for all coordinators together; 0 means 256. When it
	// is reached the oldest is dropped: its coordinator meets an unknown
	// presignature once and makes another.
	MaxPresignatures int
	// Log, when set, gets a line for each request refused. Nil logs
	// nothing.
	Log *slog.Logger
}

// DKLS23Party is one party of a DKLS23 secp256k1 key (package dkls23),
// serving a coordinator over mutual TLS 1.3 as a Party serves FROST: the
// same listener, handshake and coordinator pins. With the coordinator it
// makes presignatures (two requests), which both keep in memory, and
// signs with one of them per request. It deletes a presignature before it
// answers with the share it signed, so no presignature signs twice; a
// restart loses the presignatures, which is safe (the coordinator makes
// new ones). It is safe for concurrent use.
type DKLS23Party struct {
	share *dkls23.Share
	srv   *Party
	max   int
	log   *slog.Logger

	mu   sync.Mutex
	pres map[dklsID]*dklsHeld
	seq  uint64

	stats partyStats
}

// dklsHeld is a presignature a party holds: in the making (run) or made
// (ps), for the coordinator owner.
type dklsHeld struct {
	owner coordinatorID
	seq   uint64 // age order
	peer  int    // the coordinator's share's index
	run   *dkls23.Presign
	ps    *dkls23.Presignature
	busy  bool // its round is being computed
}

// NewDKLS23Party returns a party for cfg. It does not listen: call Serve.
func NewDKLS23Party(cfg DKLS23PartyConfig) (*DKLS23Party, error) {
	if cfg.Share == nil {
		return nil, fmt.Errorf("threshold: DKLS23PartyConfig needs Share: %w", signer.ErrInvalidArgument)
	}
	t, err := serverTLS(cfg.TLS, cfg.Coordinators, "DKLS23PartyConfig")
	if err != nil {
		return nil, err
	}
	d := &DKLS23Party{share: cfg.Share, max: cfg.MaxPresignatures, log: cfg.Log, pres: map[dklsID]*dklsHeld{}}
	if d.max <= 0 {
		d.max = 256
	}
	if d.log == nil {
		d.log = slog.New(slog.DiscardHandler)
	}
	d.srv = &Party{tls: t, log: d.log, listeners: map[net.Listener]bool{}, conns: map[net.Conn]bool{},
		pending: make(chan struct{}, maxPendingHandshakes), handler: d.handle}
	return d, nil
}

// ID returns the party's index in the key (1 … n).
func (d *DKLS23Party) ID() int { return d.share.ID }

// Serve accepts connections on l and serves them until l fails or the
// party is closed, as Party.Serve does.
func (d *DKLS23Party) Serve(l net.Listener) error { return d.srv.Serve(l) }

// Close stops serving and waits for the requests in flight; the
// presignatures are dropped.
func (d *DKLS23Party) Close() error {
	err := d.srv.Close()
	d.mu.Lock()
	clear(d.pres)
	d.mu.Unlock()
	return err
}

// Counters returns the bytes the party sent and received.
func (d *DKLS23Party) Counters() Counters { return d.srv.Counters() }

// Presignatures returns how many presignatures the party holds ready.
func (d *DKLS23Party) Presignatures() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	n := 0
	for _, h := range d.pres {
		if h.ps != nil {
			n++
		}
	}
	return n
}

// Signed and Refused count the sign requests answered with a share and
// refused.
func (d *DKLS23Party) Signed() uint64 { return d.stats.shares.Load() }
func (d *DKLS23Party) Refused() uint64 {
	return d.stats.refused.Load() + d.stats.nonceUsed.Load() + d.stats.failed.Load()
}

// ServeStats returns the party's request counts, as a Party's: Shares
// sent, sign requests refused for a presignature unknown or used
// (NonceUsed) or for another reason (Failed), and Presigned, the
// presignatures made. Refused (a guard's double-sign refusals) stays 0:
// an account key's party has no guard.
func (d *DKLS23Party) ServeStats() ServeStats {
	return ServeStats{Shares: d.stats.shares.Load(), NonceUsed: d.stats.nonceUsed.Load(),
		Failed: d.stats.failed.Load(), Presigned: d.stats.presigned.Load()}
}

func (d *DKLS23Party) handle(f frame, owner coordinatorID) frame {
	var typ byte
	var body []byte
	var code byte
	var err error
	switch f.typ {
	case typeDKLSPresign:
		typ = typeDKLSPresigned
		body, code, err = d.presign(f.body, owner)
	case typeDKLSFinish:
		typ = typeDKLSFinished
		code, err = d.finish(f.body, owner)
	case typeDKLSSign:
		typ = typeDKLSShare
		body, code, err = d.sign(f.body, owner)
	default:
		code, err = codeInvalid, &ProtocolError{fmt.Sprintf("unknown request type %d (this party serves a DKLS23 key)", f.typ)}
	}
	if f.typ == typeDKLSSign {
		d.stats.noteSign(code, err)
	}
	if err != nil {
		level := slog.LevelWarn
		if code == codeNonceUsed {
			level = slog.LevelInfo
		}
		d.log.Log(context.Background(), level, "DKLS23 request refused", "party", d.share.ID, "type", f.typ, "err", err)
		return errorFrame(f.id, code, err)
	}
	return frame{typ: typ, id: f.id, body: body}
}

// reserve records id as a presignature in the making for owner, dropping
// the oldest held one when the party holds MaxPresignatures.
func (d *DKLS23Party) reserve(id dklsID, owner coordinatorID) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if _, dup := d.pres[id]; dup {
		return &ProtocolError{"DKLS23 presign request reuses a presignature id"}
	}
	if len(d.pres) >= d.max {
		var oldest dklsID
		var at uint64 = ^uint64(0)
		for k, h := range d.pres {
			if !h.busy && h.seq < at {
				oldest, at = k, h.seq
			}
		}
		if at == ^uint64(0) {
			return fmt.Errorf("threshold: DKLS23 party %d: %d presignatures in the making: %w", d.share.ID, len(d.pres), signer.ErrBusy)
		}
		delete(d.pres, oldest)
	}
	d.seq++
	d.pres[id] = &dklsHeld{owner: owner, seq: d.seq, busy: true}
	return nil
}

// claim takes the held presignature id of owner for a round, marking it
// busy (finish) or deleting it (sign); a wrong owner's is unknown.
func (d *DKLS23Party) claim(id dklsID, owner coordinatorID, remove bool) *dklsHeld {
	d.mu.Lock()
	defer d.mu.Unlock()
	h := d.pres[id]
	if h == nil || h.owner != owner || h.busy || (h.ps == nil) == remove {
		return nil
	}
	if remove {
		delete(d.pres, id)
	} else {
		h.busy = true
	}
	return h
}

func (d *DKLS23Party) presign(b []byte, owner coordinatorID) ([]byte, byte, error) {
	id, from, msg1, err := parseDKLSPresign(b)
	if err != nil {
		return nil, codeInvalid, err
	}
	if err := d.reserve(id, owner); err != nil {
		var pe *ProtocolError
		if errors.As(err, &pe) {
			return nil, codeInvalid, err
		}
		return nil, codeUnavailable, err
	}
	run, out, err := dkls23.NewPresign(d.share, dklsSID(id), []int{from, d.share.ID}, rand.Reader)
	var out2 map[int][]byte
	if err == nil {
		out2, err = run.Round2(map[int][]byte{from: msg1})
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	h := d.pres[id]
	if err != nil || h == nil {
		delete(d.pres, id)
		if err == nil {
			err = fmt.Errorf("threshold: DKLS23 party %d: presignature dropped for room: %w", d.share.ID, signer.ErrBusy)
			return nil, codeUnavailable, err
		}
		return nil, codeInvalid, err
	}
	h.run, h.peer, h.busy = run, from, false
	return encodeDKLSPresigned(out[from], out2[from]), 0, nil
}

func (d *DKLS23Party) finish(b []byte, owner coordinatorID) (byte, error) {
	id, msg2, err := parseDKLSRequest(b, -1)
	if err != nil {
		return codeInvalid, err
	}
	h := d.claim(id, owner, false)
	if h == nil {
		return codeNonceUsed, fmt.Errorf("threshold: DKLS23 party %d: no presignature in the making under that id", d.share.ID)
	}
	ps, err := h.run.Finish(map[int][]byte{h.peer: msg2})
	d.mu.Lock()
	defer d.mu.Unlock()
	if err != nil || d.pres[id] != h {
		delete(d.pres, id)
		if err == nil {
			return codeUnavailable, fmt.Errorf("threshold: DKLS23 party %d: presignature dropped for room: %w", d.share.ID, signer.ErrBusy)
		}
		return codeInvalid, err
	}
	h.run, h.ps, h.busy = nil, ps, false
	d.stats.presigned.Add(1)
	return 0, nil
}

// sign serves a sign request: the presignature is deleted before its
// share is computed and sent, so it signs one message at most.
func (d *DKLS23Party) sign(b []byte, owner coordinatorID) ([]byte, byte, error) {
	id, hash, err := parseDKLSRequest(b, 32)
	if err != nil {
		return nil, codeInvalid, err
	}
	h := d.claim(id, owner, true)
	if h == nil {
		return nil, codeNonceUsed, fmt.Errorf("threshold: DKLS23 party %d: presignature unknown or used", d.share.ID)
	}
	s, err := h.ps.Sign(hash)
	if err != nil {
		return nil, codeInvalid, err
	}
	out, err := s.MarshalBinary()
	if err != nil {
		return nil, codeUnavailable, err
	}
	return out, 0, nil
}
