package cardsim

import (
	"context"
	"crypto"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/signerkit/signerkit/internal/simtime"
	"github.com/signerkit/signerkit/openpgpcard"
	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/signer/signertrace"
)

// Fault is a failure the card injects into its next exchange.
type Fault uint8

const (
	// FaultRemove removes the card after it ran the command and before it
	// answers: the card pulled mid-command. Insert puts it back. On the
	// vpcd face the connection closes instead, which vpcd reports as the
	// card removed, and DialVPCD's caller connects it again.
	FaultRemove Fault = iota + 1
)

// plugState is whether the card is inserted, and a channel closed when it
// is removed or hung.
type plugState struct {
	removed bool
	gone    chan struct{} // closed on removal
	hung    chan struct{} // non-nil while hung; closed on release
}

func (p *plugState) init() { p.gone = make(chan struct{}) }

// Inject arms f for the next command the card receives.
func (c *Card) Inject(f Fault) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.faults = append(c.faults, f)
}

// takeFaultLocked takes the next armed fault, or 0. The caller holds c.mu.
func (c *Card) takeFaultLocked() Fault {
	if len(c.faults) == 0 {
		return 0
	}
	f := c.faults[0]
	c.faults = c.faults[1:]
	return f
}

// Remove takes the card out of its reader: exchanges in flight and later
// ones fail with signer.ErrDisconnected, dials with ErrDeviceNotFound.
func (c *Card) Remove() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.removeLocked()
}

func (c *Card) removeLocked() {
	if !c.plug.removed {
		c.plug.removed = true
		close(c.plug.gone)
	}
}

// Insert puts the card back, powered up afresh: no application selected,
// no PIN verified.
func (c *Card) Insert() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.plug.removed {
		c.plug.removed = false
		c.plug.gone = make(chan struct{})
	}
	c.resetLocked()
}

// Reset is a power cycle: the application is deselected and every PIN
// verification forgotten.
func (c *Card) Reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.resetLocked()
}

func (c *Card) resetLocked() {
	c.selected = false
	c.verified.cds, c.verified.other, c.verified.admin = false, false, false
	c.chain, c.rest = nil, nil
}

// Hang makes the card stop answering until release is called: exchanges
// wait for release, their context, or removal.
func (c *Card) Hang() (release func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	h := make(chan struct{})
	c.plug.hung = h
	var once sync.Once
	return func() {
		once.Do(func() {
			c.mu.Lock()
			if c.plug.hung == h {
				c.plug.hung = nil
			}
			c.mu.Unlock()
			close(h)
		})
	}
}

// ImportKey puts priv in slot s, as if imported, and sets the slot's
// attributes to its algorithm: *rsa.PrivateKey (2048 or 4096 bits),
// *ecdsa.PrivateKey on P-256 (ECDH in SlotDecrypt), ed25519.PrivateKey, or
// an X25519 *ecdh.PrivateKey for SlotDecrypt.
func (c *Card) ImportKey(s Slot, priv crypto.PrivateKey) error {
	k, err := keyFromSigner(priv, s == SlotDecrypt)
	if err != nil {
		return err
	}
	if s == SlotDecrypt && !k.alg.deciphers() || s != SlotDecrypt && !k.alg.signs() {
		return fmt.Errorf("cardsim: a %v key cannot go in the %v slot", k.alg, s)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.attrs[s], c.keys[s] = k.alg, k
	return nil
}

// Transport returns a connection to the card, as a reader gives one: each
// exchange runs one APDU and spends the profile's modeled time on the
// caller's trace (the exchange as StageWire, the key operation as
// StageDevice). It fails with signer.ErrDeviceNotFound while the card is
// removed.
func (c *Card) Transport() (openpgpcard.Transport, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.plug.removed {
		return nil, fmt.Errorf("cardsim: no card in the reader: %w", signer.ErrDeviceNotFound)
	}
	return &port{c: c, gone: c.plug.gone, closed: make(chan struct{})}, nil
}

// Dialer returns an openpgpcard.Dialer over Transport.
func (c *Card) Dialer() openpgpcard.Dialer {
	return func(context.Context) (openpgpcard.Transport, error) { return c.Transport() }
}

type port struct {
	c      *Card
	gone   chan struct{}
	closed chan struct{}
	once   sync.Once
}

var errRemoved = fmt.Errorf("cardsim: card removed: %w", signer.ErrDisconnected)

func (p *port) Exchange(ctx context.Context, apdu []byte) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	c := p.c
	c.mu.Lock()
	hung := c.plug.hung
	c.mu.Unlock()
	if hung != nil {
		select {
		case <-hung:
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-p.gone:
			return nil, errRemoved
		case <-p.closed:
			return nil, fmt.Errorf("cardsim: %w", signer.ErrClosed)
		}
	}
	c.mu.Lock()
	select {
	case <-p.closed:
		c.mu.Unlock()
		return nil, fmt.Errorf("cardsim: %w", signer.ErrClosed)
	case <-p.gone:
		c.mu.Unlock()
		return nil, errRemoved
	default:
	}
	resp, o := c.transmitLocked(apdu)
	removed := c.takeFaultLocked() == FaultRemove
	if removed {
		c.removeLocked()
	}
	c.mu.Unlock()
	if removed {
		return nil, errRemoved
	}
	if err := c.spend(ctx, o); err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return nil, fmt.Errorf("cardsim: %w", err)
		}
		return nil, err
	}
	return resp, nil
}

// spend spends the modeled time of one exchange.
func (c *Card) spend(ctx context.Context, o op) error {
	if err := simtime.Spend(ctx, c.mode, signertrace.StageWire, c.profile.APDU, c.profile.Name); err != nil {
		return err
	}
	return simtime.Spend(ctx, c.mode, signertrace.StageDevice, c.profile.cost(o), c.profile.Name)
}

// Cost returns the modeled time of one sign (decipher false) or decipher
// with alg on this card's profile, its one APDU included: what a benchmark
// row models.
func (p Profile) Cost(alg Algorithm, decipher bool) time.Duration {
	k := opSign
	if decipher {
		k = opDecipher
	}
	return p.APDU + p.cost(op{kind: k, alg: alg})
}

func (p *port) Close() error {
	p.once.Do(func() { close(p.closed) })
	return nil
}
