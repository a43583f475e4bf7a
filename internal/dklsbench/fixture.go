package dklsbench

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/big"
	"sync"
	"sync/atomic"
	"time"

	"github.com/decred/dcrd/dcrec/secp256k1/v4/ecdsa"
	"github.com/signerkit/signerkit/internal/thresholdbench"
	"github.com/signerkit/signerkit/netshape"
	"github.com/signerkit/signerkit/threshold/dkls23"
	"github.com/signerkit/signerkit/threshold/dkls23/dkls23test"
)

// Row is the prefix of every row: DKLS23 on secp256k1, any 2 of 3.
const Row = "dkls23-2of3-secp256k1"

// Signers is the signing set of the online rows: the two parties nearest
// the coordinator in every Network (in Trio, Frankfurt and Gävle).
var Signers = []int{1, 2}

// Fixture is a 2-of-3 key's parties serving the online round over TLS,
// and a coordinator connected to the signing parties through netshape. It
// is safe for concurrent use.
type Fixture struct {
	Net     thresholdbench.Network
	Shares  []*dkls23.Share // party i at index i−1
	pub     []byte
	servers []*server
	clients []*client // to Signers, in order
	counter netshape.Counter
	payload atomic.Uint64
	next    atomic.Uint64 // presignature ids handed out
	made    atomic.Uint64 // presignatures in the parties' pools
}

// NewFixture generates a key in process and starts the parties and the
// coordinator's connections on n.
func NewFixture(n thresholdbench.Network) (*Fixture, error) {
	_, shares, err := dkls23test.Keygen(2, 3)
	if err != nil {
		return nil, err
	}
	f := &Fixture{Net: n, Shares: shares, pub: shares[0].PublicKey()}
	cert, pool, err := selfSigned()
	if err != nil {
		return nil, err
	}
	for _, s := range shares {
		srv, err := startServer(s, cert)
		if err != nil {
			f.Close()
			return nil, err
		}
		f.servers = append(f.servers, srv)
	}
	for _, id := range Signers {
		link := n.Link(id)
		link.Counter = &f.counter
		c, err := dial(f.servers[id-1].ln.Addr().String(), link, pool, &f.payload)
		if err != nil {
			f.Close()
			return nil, err
		}
		f.clients = append(f.clients, c)
	}
	return f, nil
}

// Close stops the coordinator's connections and the parties.
func (f *Fixture) Close() {
	for _, c := range f.clients {
		c.close()
	}
	for _, s := range f.servers {
		s.close()
	}
}

// Fill makes n more presignatures for Signers, in process, GOMAXPROCS at
// a time, and hands each party its half.
func (f *Fixture) Fill(n int) error {
	first := f.made.Add(uint64(n)) - uint64(n)
	return parallel(n, func(i int) error {
		_, pre, err := dkls23test.Presign(f.Shares, Signers)
		if err != nil {
			return err
		}
		for _, id := range Signers {
			f.servers[id-1].put(first+uint64(i), pre[id])
		}
		return nil
	})
}

// Signed is one sign's outcome.
type Signed struct {
	Hash []byte
	Sig  *ecdsa.Signature
	Took time.Duration
	Err  error
}

// Sign makes one signature with the next presignature, of a hash distinct
// for each sign.
func (f *Fixture) Sign(ctx context.Context) Signed {
	id := f.next.Add(1) - 1
	h := sha256.Sum256(fmt.Appendf(nil, "dklsbench sign %d", id))
	req := binary.BigEndian.AppendUint64(nil, id)
	req = append(req, h[:]...)
	t0 := time.Now()
	var wg sync.WaitGroup
	resp := make([][]byte, len(f.clients))
	errs := make([]error, len(f.clients))
	for i, c := range f.clients[1:] {
		wg.Go(func() { resp[i+1], errs[i+1] = c.call(ctx, req) })
	}
	resp[0], errs[0] = f.clients[0].call(ctx, req)
	wg.Wait()
	out := Signed{Hash: h[:]}
	if err := errors.Join(errs...); err != nil {
		out.Err = err
		return out
	}
	var parts []*dkls23.SignShare
	for _, b := range resp {
		s, err := dkls23.UnmarshalSignShare(b)
		if err != nil {
			out.Err = err
			return out
		}
		parts = append(parts, s)
	}
	out.Sig, out.Err = dkls23.Combine(f.pub, h[:], parts)
	out.Took = time.Since(t0)
	return out
}

// PublicKey returns the group key, compressed.
func (f *Fixture) PublicKey() []byte { return f.pub }

// Traffic returns the bytes so far: frame bodies, bytes under TLS
// (netshape's payload), and those plus 52 bytes of IPv4 and TCP headers
// per segment.
func (f *Fixture) Traffic() (payload, tlsBytes, wire uint64) {
	s := f.counter.Stats()
	return f.payload.Load(), uint64(s.Out.Bytes + s.In.Bytes), uint64(s.Out.WireBytes(52) + s.In.WireBytes(52))
}

// selfSigned returns a certificate for the parties and a pool that trusts
// it.
func selfSigned() (tls.Certificate, *x509.CertPool, error) {
	pub, key, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), DNSNames: []string{"party"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, pub, key)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	c, err := x509.ParseCertificate(der)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	pool := x509.NewCertPool()
	pool.AddCert(c)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: c}, pool, nil
}

// Frames: a 4-byte length of what follows, an 8-byte request id, the body.
const frameHeader = 12

// maxFrame bounds a frame's body: a presign round-2 message is 40 KB.
const maxFrame = 1 << 16

func writeFrame(w io.Writer, id uint64, body []byte) error {
	b := make([]byte, frameHeader, frameHeader+len(body))
	binary.BigEndian.PutUint32(b, uint32(8+len(body)))
	binary.BigEndian.PutUint64(b[4:], id)
	_, err := w.Write(append(b, body...))
	return err
}

func readFrame(r io.Reader) (uint64, []byte, error) {
	var h [frameHeader]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return 0, nil, err
	}
	n := binary.BigEndian.Uint32(h[:])
	if n < 8 || n-8 > maxFrame {
		return 0, nil, fmt.Errorf("dklsbench: frame of %d bytes", n)
	}
	body := make([]byte, n-8)
	_, err := io.ReadFull(r, body)
	return binary.BigEndian.Uint64(h[4:]), body, err
}
