package main

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/signerkit/signerkit/daemon"
	"github.com/signerkit/signerkit/inprocess"
	"github.com/signerkit/signerkit/internal/atomicfile"
	"github.com/signerkit/signerkit/keybase"
	"github.com/signerkit/signerkit/keyfmt"
	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/threshold"
	"github.com/signerkit/signerkit/threshold/dkls23"
	"github.com/signerkit/signerkit/threshold/frost"
)

// cmdThreshold runs `signerkit threshold SUB`: the tools that make a
// threshold key's shares and certificates (docs/threshold.md).
func cmdThreshold(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("threshold "+args[0], stderr)
	var from, out, share, pass, scheme string
	var t, n, parties, coordinators, logN int
	var dkg dkgArgs
	switch args[0] {
	case "dkg":
		dkg.flags(fs)
	case "split":
		fs.StringVar(&from, "from", "", "the validator key file to split (priv_validator_key.json, PEM PKCS#8)")
		fs.StringVar(&scheme, "scheme", threshold.SchemeFROST, "frost-ed25519: split the -from key; "+
			"dkls23-secp256k1: make a new secp256k1 account key (gno, Cosmos) and deal its DKLS23 shares")
		fs.StringVar(&out, "out", "", "the directory to write public.pem and share-<i>.pem into (made 0700; no file is overwritten)")
		fs.IntVar(&t, "t", 2, "the threshold: how many parties sign together")
		fs.IntVar(&n, "n", 3, "the number of shares")
	case "certs":
		fs.StringVar(&out, "out", "", "the directory to write the CA and the certificates into (made 0700; no file is overwritten)")
		fs.IntVar(&parties, "parties", 3, "the number of parties (party-1 … party-N)")
		fs.IntVar(&coordinators, "coordinators", 1, "the number of coordinators (coordinator-1 … coordinator-N)")
	case "show":
		fs.StringVar(&share, "share", "", "a share file, or a public key file")
	case "export":
		fs.StringVar(&share, "share", "", "the share file to export")
		fs.StringVar(&out, "out", "", "the encrypted file to write (mode 0600, not overwritten)")
		fs.StringVar(&pass, "passphrase-source", "", "where the passphrase is: env:NAME or file:/path")
		fs.IntVar(&logN, "scrypt-log-n", threshold.DefaultExportLogN, "scrypt's cost, log2(N)")
	case "import":
		fs.StringVar(&from, "from", "", "the encrypted share (from export)")
		fs.StringVar(&out, "out", "", "the share file to write (mode 0600, not overwritten)")
		fs.StringVar(&pass, "passphrase-source", "", "where the passphrase is: env:NAME or file:/path")
	}
	if err := parseFlags(fs, args[1:]); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "signerkit threshold %s: unexpected argument %q\n", args[0], fs.Arg(0))
		return errUsage
	}
	switch args[0] {
	case "dkg":
		return thresholdDKG(&dkg, stdout, stderr)
	case "split":
		if scheme == threshold.SchemeDKLS23 {
			return thresholdDealDKLS23(from, out, t, n, stdout, stderr)
		} else if scheme != threshold.SchemeFROST {
			fmt.Fprintf(stderr, "signerkit threshold split: -scheme %q: want %s or %s\n", scheme, threshold.SchemeFROST, threshold.SchemeDKLS23)
			return errUsage
		}
		return thresholdSplit(from, out, t, n, stdout, stderr)
	case "certs":
		return thresholdCerts(out, parties, coordinators, stdout, stderr)
	case "show":
		return thresholdShow(share, stdout, stderr)
	case "export":
		return thresholdExport(share, out, pass, logN, stdout, stderr)
	}
	return thresholdImport(from, out, pass, stdout, stderr)
}

func thresholdMissing(stderr io.Writer, cmd, what string) error {
	fmt.Fprintf(stderr, "signerkit threshold %s: %s is required\n", cmd, what)
	return errUsage
}

func thresholdSplit(from, out string, t, n int, stdout, stderr io.Writer) error {
	if from == "" || out == "" {
		return thresholdMissing(stderr, "split", "-from FILE and -out DIR")
	}
	priv, err := inprocess.LoadKeyFile(from)
	if err != nil {
		return err
	}
	key, ok := priv.(ed25519.PrivateKey)
	if !ok {
		return fmt.Errorf("signerkit threshold split: %s holds a %T key: a validator key is Ed25519: %w", from, priv, signer.ErrUnsupported)
	}
	defer clear(key)
	d, err := frost.SplitSeed(key.Seed(), t, n, rand.Reader)
	if err != nil {
		return fmt.Errorf("signerkit threshold split: %w", err)
	}
	defer func() {
		for _, k := range d.Shares {
			k.Wipe()
		}
	}()
	if !bytes.Equal(d.Public.GroupPublicKey(), key.Public().(ed25519.PublicKey)) {
		return fmt.Errorf("signerkit threshold split: the group key is not the validator's: %w", signer.ErrInvalidKey)
	}
	if err := os.MkdirAll(out, 0o700); err != nil {
		return err
	}
	paths, err := threshold.WriteShareFiles(out, d.Shares, d.Public)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "split %s %d-of-%d; the group key is the validator's:\n", from, t, n)
	keyLines(stdout, "  group key", d.Public.GroupPublicKey())
	for _, p := range paths {
		fmt.Fprintf(stdout, "wrote %s\n", p)
	}
	fmt.Fprintf(stdout, "Give share-<i>.pem to party i alone, keep an encrypted backup of each (signerkit threshold export),\n"+
		"then delete %s and the shares from this machine.\n", from)
	return nil
}

func thresholdCerts(out string, parties, coordinators int, stdout, stderr io.Writer) error {
	if out == "" {
		return thresholdMissing(stderr, "certs", "-out DIR")
	}
	if err := os.MkdirAll(out, 0o700); err != nil {
		return err
	}
	ca, issued, err := threshold.WriteCerts(out, parties, coordinators, 0)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s and %s (keep the CA key offline: it only issues more)\n", ca.CertFile, ca.KeyFile)
	for _, c := range issued {
		fmt.Fprintf(stdout, "wrote %-14s %s %s  pin %s\n", c.Name, c.CertFile, c.KeyFile, c.Pin)
	}
	return nil
}

func thresholdShow(path string, stdout, stderr io.Writer) error {
	if path == "" {
		return thresholdMissing(stderr, "show", "-share FILE")
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if bytes.Contains(data, []byte("-----BEGIN SIGNERKIT DKLS23 SHARE-----")) {
		clear(data)
		return thresholdShowDKLS23(path, stdout)
	}
	pub, err := threshold.LoadPublic(path)
	if err != nil {
		return err
	}
	isShare := bytes.Contains(data, []byte("-----BEGIN SIGNERKIT FROST SHARE-----"))
	clear(data)
	if isShare {
		k, _, err := threshold.LoadShare(path)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "share of participant %d\n  verifying share:   %x\n", k.ID(), k.VerifyingShare())
		k.Wipe()
	} else {
		fmt.Fprintln(stdout, "public key file (no share)")
	}
	fmt.Fprintf(stdout, "  threshold:         %d of %d (participants %v)\n", pub.MinSigners(), len(pub.IDs()), pub.IDs())
	keyLines(stdout, "  group key", pub.GroupPublicKey())
	return nil
}

// thresholdPassphrase reads the passphrase that a -passphrase-source names.
func thresholdPassphrase(src, cmd string, stderr io.Writer) ([]byte, error) {
	if src == "" {
		return nil, thresholdMissing(stderr, cmd, "-passphrase-source env:NAME or file:/path")
	}
	s, err := signer.SecretSource(src)
	if err != nil {
		return nil, err
	}
	return s()
}

func thresholdExport(share, out, passSrc string, logN int, stdout, stderr io.Writer) error {
	if share == "" || out == "" {
		return thresholdMissing(stderr, "export", "-share FILE and -out FILE")
	}
	pass, err := thresholdPassphrase(passSrc, "export", stderr)
	if err != nil {
		return err
	}
	defer clear(pass)
	plain, err := os.ReadFile(share)
	if err != nil {
		return err
	}
	defer clear(plain)
	enc, err := threshold.ExportShare(plain, pass, logN)
	if err != nil {
		return err
	}
	if err := atomicfile.CreateFile(out, enc, atomicfile.Options{}); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s, %s encrypted under the passphrase (scrypt 2^%d, XChaCha20-Poly1305)\n", out, share, logN)
	return nil
}

func thresholdImport(from, out, passSrc string, stdout, stderr io.Writer) error {
	if from == "" || out == "" {
		return thresholdMissing(stderr, "import", "-from FILE and -out FILE")
	}
	pass, err := thresholdPassphrase(passSrc, "import", stderr)
	if err != nil {
		return err
	}
	defer clear(pass)
	enc, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	start := time.Now()
	plain, err := threshold.ImportShare(enc, pass)
	if err != nil {
		return err
	}
	defer clear(plain)
	if err := atomicfile.CreateFile(out, plain, atomicfile.Options{}); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s (decrypted in %v)\n", out, time.Since(start).Round(time.Millisecond))
	return nil
}

// checkThresholdKey checks a threshold: key URI and the coordinator config it
// names (init writes no config for a key the daemon could not open); any
// other scheme is left to start.
func checkThresholdKey(uri string) error {
	if daemon.Scheme(uri) != threshold.Scheme {
		return nil
	}
	return threshold.CheckURI(uri)
}

// thresholdDealDKLS23 makes a new 2-of-n DKLS23 secp256k1 key in this
// process (dkls23.Deal) and writes its share files.
func thresholdDealDKLS23(from, out string, t, n int, stdout, stderr io.Writer) error {
	if out == "" {
		return thresholdMissing(stderr, "split", "-out DIR")
	}
	if from != "" {
		fmt.Fprintf(stderr, "signerkit threshold split: -scheme %s makes a new key; -from (an existing key) does not apply\n", threshold.SchemeDKLS23)
		return errUsage
	}
	if t != 2 {
		return fmt.Errorf("signerkit threshold split: -t %d: DKLS23 keys are served 2-of-n: %w", t, signer.ErrUnsupported)
	}
	shares, err := dkls23.Deal(t, n, rand.Reader)
	if err != nil {
		return fmt.Errorf("signerkit threshold split: %w", err)
	}
	if err := os.MkdirAll(out, 0o700); err != nil {
		return err
	}
	paths, err := threshold.WriteDKLS23ShareFiles(out, shares)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "made a new %d-of-%d DKLS23 secp256k1 key:\n", t, n)
	if err := dklsKeyLines(stdout, shares[0].PublicKey()); err != nil {
		return err
	}
	for _, p := range paths {
		fmt.Fprintf(stdout, "wrote %s\n", p)
	}
	fmt.Fprintf(stdout, "The coordinator keeps one share (its config's share), each other goes to its party alone;\n"+
		"keep an encrypted backup of each (signerkit threshold export), then delete them from this machine.\n")
	return nil
}

// dklsKeyLines prints a secp256k1 group key as gno shows it.
func dklsKeyLines(w io.Writer, pub []byte) error {
	k, err := signer.ParseSecp256k1PublicKey(pub)
	if err != nil {
		return err
	}
	addr, err := keybase.Address(k)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "  group key (hex):     secp256k1:%x\n", pub)
	fmt.Fprintf(w, "  gno public key:      %s\n", keyfmt.GnoSecp256k1PubKey(pub))
	fmt.Fprintf(w, "  gno address:         %s\n", addr)
	return nil
}

func thresholdShowDKLS23(path string, stdout io.Writer) error {
	s, err := threshold.LoadDKLS23Share(path)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "DKLS23 share of participant %d, %d of %d\n", s.ID, s.T, s.N)
	return dklsKeyLines(stdout, s.PublicKey())
}
