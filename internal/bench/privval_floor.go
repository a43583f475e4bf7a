package bench

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/signerkit/signerkit/inprocess"
	"github.com/signerkit/signerkit/signer"
)

// The floor rows of the remote-signer table, raw-socket-<unix|tcp>[-fsync]:
// the same in-process key behind a bare socket, and nothing else. The
// validator side writes the sign bytes in a uvarint-length frame; a
// goroutine reads the frame, signs it (after writing and syncing a 4 KiB
// record in place, in the -fsync row, as the guard does) and writes the
// signature back in a frame. No protocol, no guard, no parsing: added-ms/op
// here is what the machine's sockets, scheduler and disk cost a round
// trip, the least any remote signer can add. The tcp row runs inside a
// SecretConnection both ways, as the privval-*-tcp rows do. Read the
// privval rows' added-ms/op against these, measured in the same run.
func init() {
	for _, network := range []string{"unix", "tcp"} {
		for _, fsync := range []bool{false, true} {
			name := "raw-socket-" + network
			if fsync {
				name += "-fsync"
			}
			Register(Backend{Name: name, Algorithm: signer.Ed25519, Payloads: privvalPayloads,
				Messages: voteMessages, Open: openRawSocket(network, fsync)})
		}
	}
}

type rawSocketRow struct {
	key      *timedKey
	view     atomic.Int64
	syncs    atomic.Int64
	syncTime atomic.Int64
	conn     net.Conn
	rd       *bufio.Reader
	closers  []func() error
	done     chan struct{}
}

func openRawSocket(network string, fsync bool) func(context.Context, Params) (*Instance, error) {
	return func(ctx context.Context, _ Params) (inst *Instance, err error) {
		k, err := inprocess.Generate(signer.Ed25519)
		if err != nil {
			return nil, err
		}
		r := &rawSocketRow{key: &timedKey{Signer: k}, done: make(chan struct{})}
		defer func() {
			if err != nil {
				r.close()
			}
		}()
		var state *os.File
		if fsync {
			dir, err := os.MkdirTemp("", "signerkit-floor-")
			if err != nil {
				return nil, err
			}
			r.closers = append(r.closers, func() error { return os.RemoveAll(dir) })
			if state, err = os.Create(filepath.Join(dir, "state")); err != nil {
				return nil, err
			}
			r.closers = append(r.closers, state.Close)
		}
		var ln net.Listener
		if network == "unix" {
			dir, err := os.MkdirTemp("", "sk-")
			if err != nil {
				return nil, err
			}
			r.closers = append(r.closers, func() error { return os.RemoveAll(dir) })
			ln, err = net.Listen("unix", filepath.Join(dir, "s"))
			if err != nil {
				return nil, err
			}
		} else if ln, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
			return nil, err
		}
		r.closers = append(r.closers, ln.Close)
		signerHS, nodeHS := privvalHandshakes("cometbft", network)
		octx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		accepted := make(chan net.Conn, 1)
		go func() {
			defer close(r.done)
			c, err := ln.Accept()
			if err != nil {
				accepted <- nil
				return
			}
			if signerHS != nil {
				sc, _, err := signerHS(octx, c)
				if err != nil {
					c.Close()
					accepted <- nil
					return
				}
				c = sc
			}
			accepted <- c
			r.serve(c, state)
		}()
		c, err := net.Dial(ln.Addr().Network(), ln.Addr().String())
		if err != nil {
			return nil, err
		}
		if nodeHS != nil {
			sc, _, err := nodeHS(octx, c)
			if err != nil {
				c.Close()
				return nil, err
			}
			c = sc
		}
		r.conn, r.rd = c, bufio.NewReader(c)
		r.closers = append(r.closers, c.Close)
		if s := <-accepted; s == nil {
			return nil, errors.New("bench: the floor's signer side did not accept")
		} else {
			r.closers = append(r.closers, s.Close)
		}
		return &Instance{Sign: r.sign, Public: k.Public(), Algorithm: signer.Ed25519, Close: r.close, Metrics: r.metrics}, nil
	}
}

// serve answers frames on c until it closes.
func (r *rawSocketRow) serve(c net.Conn, state *os.File) {
	rd := bufio.NewReader(c)
	record := make([]byte, 4096)
	var out []byte
	for {
		msg, err := readFrame(rd)
		if err != nil {
			return
		}
		if state != nil {
			start := time.Now()
			copy(record, msg)
			if _, err := state.WriteAt(record, 0); err != nil {
				return
			}
			if err := state.Sync(); err != nil {
				return
			}
			r.syncTime.Add(int64(time.Since(start)))
			r.syncs.Add(1)
		}
		sig, err := r.key.SignContext(context.Background(), msg)
		if err != nil {
			return
		}
		out = binary.AppendUvarint(out[:0], uint64(len(sig)))
		if _, err := c.Write(append(out, sig...)); err != nil {
			return
		}
	}
}

func readFrame(rd *bufio.Reader) ([]byte, error) {
	n, err := binary.ReadUvarint(rd)
	if err != nil {
		return nil, err
	}
	if n > 1<<16 {
		return nil, fmt.Errorf("bench: frame of %d bytes", n)
	}
	b := make([]byte, n)
	_, err = io.ReadFull(rd, b)
	return b, err
}

func (r *rawSocketRow) sign(ctx context.Context, msg []byte) ([]byte, error) {
	start := time.Now()
	frame := binary.AppendUvarint(nil, uint64(len(msg)))
	if _, err := r.conn.Write(append(frame, msg...)); err != nil {
		return nil, err
	}
	sig, err := readFrame(r.rd)
	r.view.Add(int64(time.Since(start)))
	return sig, err
}

func (r *rawSocketRow) metrics() map[string]float64 {
	ms := func(ns int64) float64 { return float64(ns) / float64(time.Millisecond) }
	view, backend := r.view.Load(), r.key.nanos.Load()
	return map[string]float64{
		"added-ms":   ms(view - backend),
		"backend-ms": ms(backend),
		"fsync":      float64(r.syncs.Load()),
		"fsync-ms":   ms(r.syncTime.Load()),
	}
}

func (r *rawSocketRow) close() error {
	var errs []error
	for i := len(r.closers) - 1; i >= 0; i-- {
		if err := r.closers[i](); err != nil && !errors.Is(err, net.ErrClosed) && !errors.Is(err, os.ErrClosed) {
			errs = append(errs, err)
		}
	}
	r.closers = nil
	<-r.done
	return errors.Join(errs...)
}
