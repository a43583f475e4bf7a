package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/threshold"
	"github.com/signerkit/signerkit/threshold/dkls23"
	"github.com/signerkit/signerkit/threshold/frost"
)

// dkgArgs are the flags of `signerkit threshold dkg`.
type dkgArgs struct {
	id, t, n                int
	ceremony, listen, peers string
	cert, key, ca, out      string
	scheme                  string
	timeout                 time.Duration
}

func (a *dkgArgs) flags(fs *flag.FlagSet) {
	fs.StringVar(&a.scheme, "scheme", threshold.SchemeFROST, "frost-ed25519 (a validator key) or dkls23-secp256k1 (a secp256k1 account key: gno, Cosmos; 2-of-n)")
	fs.IntVar(&a.id, "id", 0, "this participant's identifier, 1 to N")
	fs.IntVar(&a.t, "t", 2, "the threshold")
	fs.IntVar(&a.n, "n", 3, "the number of participants")
	fs.StringVar(&a.ceremony, "ceremony", "", "the ceremony's identifier: the same for every participant, never used for another key (random text agreed beforehand)")
	fs.StringVar(&a.listen, "listen", "", "the host:port this participant accepts its peers on")
	fs.StringVar(&a.peers, "peers", "", "the other participants, ID=HOST:PORT separated by commas (their certificates must be party-<ID>'s)")
	fs.StringVar(&a.cert, "cert", "", "this participant's certificate, party-<id>.crt from signerkit threshold certs")
	fs.StringVar(&a.key, "key", "", "its private key")
	fs.StringVar(&a.ca, "ca", "", "the CA that issued the participants' certificates")
	fs.StringVar(&a.out, "out", "", "the directory to write share-<id>.pem (and for frost-ed25519 public.pem) into (made 0700; no file is overwritten)")
	fs.DurationVar(&a.timeout, "timeout", 10*time.Minute, "how long to wait for the peers")
}

// config checks the flags and makes the participant's DKGConfig (its
// listener open).
func (a *dkgArgs) config() (threshold.DKGConfig, error) {
	if a.id < 1 || a.id > a.n || a.ceremony == "" || a.listen == "" || a.peers == "" || a.cert == "" || a.key == "" || a.ca == "" || a.out == "" {
		return threshold.DKGConfig{}, fmt.Errorf("signerkit threshold dkg: -id (1 to -n), -ceremony, -listen, -peers, -cert, -key, -ca and -out are required: %w", errUsage)
	}
	if a.scheme != threshold.SchemeFROST && a.scheme != threshold.SchemeDKLS23 {
		return threshold.DKGConfig{}, fmt.Errorf("signerkit threshold dkg: -scheme %q: want %s or %s: %w", a.scheme, threshold.SchemeFROST, threshold.SchemeDKLS23, errUsage)
	}
	if a.scheme == threshold.SchemeDKLS23 && a.t != 2 {
		return threshold.DKGConfig{}, fmt.Errorf("signerkit threshold dkg: -t %d: DKLS23 keys are served 2-of-n: %w", a.t, signer.ErrUnsupported)
	}
	cfg := threshold.DKGConfig{ID: frost.Identifier(a.id), T: a.t, N: a.n, Ceremony: []byte(a.ceremony)}
	for _, p := range strings.Split(a.peers, ",") {
		id, addr, ok := strings.Cut(strings.TrimSpace(p), "=")
		n, err := strconv.ParseUint(id, 10, 16)
		if !ok || err != nil || n == 0 || addr == "" {
			return cfg, fmt.Errorf("signerkit threshold dkg: -peers: %q is not ID=HOST:PORT: %w", p, errUsage)
		}
		cfg.Peers = append(cfg.Peers, threshold.Remote{ID: frost.Identifier(n), Addr: addr, ServerName: fmt.Sprintf("party-%d", n)})
	}
	pair, err := tls.LoadX509KeyPair(a.cert, a.key)
	if err != nil {
		return cfg, fmt.Errorf("signerkit threshold dkg: -cert and -key: %w", err)
	}
	pem, err := os.ReadFile(a.ca)
	if err != nil {
		return cfg, fmt.Errorf("signerkit threshold dkg: -ca: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return cfg, fmt.Errorf("signerkit threshold dkg: -ca: %s holds no PEM certificate", a.ca)
	}
	cfg.TLS = &tls.Config{Certificates: []tls.Certificate{pair}, RootCAs: pool}
	if cfg.Listener, err = net.Listen("tcp", a.listen); err != nil {
		return cfg, fmt.Errorf("signerkit threshold dkg: -listen: %w", err)
	}
	return cfg, nil
}

// thresholdDKG runs this participant of a key generation over the network
// and writes its share and the public key.
func thresholdDKG(a *dkgArgs, stdout, stderr io.Writer) error {
	cfg, err := a.config()
	if errors.Is(err, errUsage) {
		fmt.Fprintln(stderr, strings.TrimSuffix(err.Error(), ": "+errUsage.Error()))
		return errUsage
	}
	if err != nil {
		return err
	}
	defer cfg.Listener.Close()
	if err := os.MkdirAll(a.out, 0o700); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "participant %d of %d-of-%d, ceremony %q: waiting for %d peers on %s\n", a.id, a.t, a.n, a.ceremony, len(cfg.Peers), cfg.Listener.Addr())
	ctx, cancel := context.WithTimeout(context.Background(), a.timeout)
	defer cancel()
	if a.scheme == threshold.SchemeDKLS23 {
		return thresholdDKGDKLS23(ctx, a, cfg, stdout)
	}
	k, pub, err := threshold.RunDKG(ctx, cfg)
	if err != nil {
		return fmt.Errorf("signerkit threshold dkg: %w", err)
	}
	defer k.Wipe()
	paths, err := threshold.WriteShareFiles(a.out, []*frost.KeyPackage{k}, pub)
	if err != nil {
		return err
	}
	keyLines(stdout, "the new key's group key (compare it with every participant's)", pub.GroupPublicKey())
	for _, p := range paths {
		fmt.Fprintf(stdout, "wrote %s\n", p)
	}
	return nil
}

// thresholdDKGDKLS23 runs this participant of a DKLS23 key generation
// (threshold.RunDKLS23DKG) and writes its share file, as split -scheme
// dkls23-secp256k1 writes each.
func thresholdDKGDKLS23(ctx context.Context, a *dkgArgs, cfg threshold.DKGConfig, stdout io.Writer) error {
	s, err := threshold.RunDKLS23DKG(ctx, cfg)
	if err != nil {
		return fmt.Errorf("signerkit threshold dkg: %w", err)
	}
	paths, err := threshold.WriteDKLS23ShareFiles(a.out, []*dkls23.Share{s})
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "made a new %d-of-%d DKLS23 secp256k1 key (compare its group key with every participant's):\n", a.t, a.n)
	if err := dklsKeyLines(stdout, s.PublicKey()); err != nil {
		return err
	}
	for _, p := range paths {
		fmt.Fprintf(stdout, "wrote %s\n", p)
	}
	return nil
}
