// Command signerkit is a remote signer for gno and CometBFT validators: it
// serves the keys of one config file — in process, a gnokey keybase, a
// Ledger, a YubiHSM 2 or any PKCS#11 token, each named by a signerkit URI —
// to the validators it lists, refuses every double sign with a durable
// state, and exports per-phase signing latency as Prometheus metrics.
//
// Usage:
//
//	signerkit init    -home DIR -height H [-chain ID | -genesis FILE] [-protocol P] [-key URI] [-validator ADDR] [-allow LIST | -allow-any] [-state-dir DIR]
//	signerkit start   -config signerkit.toml
//	signerkit keys    show   -config F | URI
//	signerkit keys    list   -config F | keybase:dir=…
//	signerkit keys    import -from FILE -to URI
//	signerkit keys    generate -to URI [-algorithm ed25519] [-exportable] [-wrap-key-source SRC]
//	signerkit keys    export -from URI -wrap KEY -out FILE
//	signerkit keys    delete [-yes] URI
//	signerkit yubihsm setup -connector URL [-auth-key ID -pin-source SRC -force] [-admin-id ID] [-signer-id ID] [-wrap-id ID] [-domains N] [-wrap-key-source SRC] [-force-audit]
//	signerkit state   show   -config F
//	signerkit state   init   -config F [-chain ID] -height H
//	signerkit state   repair -config F [-chain ID] -height H
//	signerkit state   import -config F [-chain ID] -from FILE [-node URL] [-force]
//	signerkit identity show -config F [-for PROTOCOL]
//	signerkit demo    [-metrics 127.0.0.1:26661] [-interval 250ms] [-heights N]
//	signerkit party   -config party.toml [-init-height H | -import-state FILE [-chain C]]
//	signerkit threshold split  -from FILE -out DIR [-t 2] [-n 3] [-scheme frost-ed25519 (-from's key) or dkls23-secp256k1 (a new key)]
//	signerkit threshold certs  -out DIR [-parties 3] [-coordinators 1]
//	signerkit threshold dkg    -id I -ceremony ID -listen ADDR -peers ID=ADDR,... -cert F -key F -ca F -out DIR [-t 2] [-n 3] [-timeout 10m] [-scheme frost-ed25519 or dkls23-secp256k1]
//	signerkit threshold show   -share FILE
//	signerkit threshold export -share FILE -out FILE -passphrase-source SRC [-scrypt-log-n 17]
//	signerkit threshold import -from FILE -out FILE -passphrase-source SRC
//	signerkit version
//	signerkit help    [COMMAND [SUBCOMMAND]]
//
// start serves until SIGTERM or SIGINT, which let a sign in flight finish,
// sync the state, close the devices and exit 0 within shutdown_grace;
// SIGHUP reloads the validators' allowlists. docs/daemon.md is the
// operator's guide and docs/metrics.md lists the metrics.
//
// Every command and subcommand takes -h (or -help, --help): it prints that
// command's usage and flags and exits 0, loading no config.
//
// Exit status: 0 after a clean stop, 1 on any error, 2 on bad usage.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"sync"
	"syscall"

	"github.com/signerkit/signerkit/daemon"
	"github.com/signerkit/signerkit/hardening"
	_ "github.com/signerkit/signerkit/inprocess"   // registers inprocess:
	_ "github.com/signerkit/signerkit/keybase"     // registers keybase:
	_ "github.com/signerkit/signerkit/ledger"      // registers ledger:
	_ "github.com/signerkit/signerkit/openpgpcard" // registers openpgpcard:
	_ "github.com/signerkit/signerkit/pkcs11"      // registers pkcs11:
	_ "github.com/signerkit/signerkit/threshold"   // registers threshold:
	_ "github.com/signerkit/signerkit/yubihsm"     // registers yubihsm:

	_ "github.com/signerkit/signerkit/keybase/gnokeyhome" // registers gnokeyhome: (a gnokey home's keys)
)

const usage = `signerkit: a remote signer for gno and CometBFT validators

  signerkit init    -home DIR -height H [-chain ID | -genesis FILE] [-protocol P] [-key URI] [-validator ADDR] [-allow LIST | -allow-any] [-state-dir DIR]
  signerkit start   -config signerkit.toml
  signerkit keys    show   -config F | URI
  signerkit keys    list   -config F | keybase:dir=...
  signerkit keys    import -from FILE -to URI
  signerkit keys    generate -to URI [-algorithm ed25519] [-exportable] [-wrap-key-source SRC]
  signerkit keys    export -from URI -wrap KEY -out FILE
  signerkit keys    delete [-yes] URI
  signerkit yubihsm setup -connector URL [-auth-key ID -pin-source SRC -force] [-admin-id ID] [-signer-id ID] [-wrap-id ID] [-domains N] [-wrap-key-source SRC] [-force-audit]
  signerkit state   show   -config F
  signerkit state   init   -config F [-chain ID] -height H
  signerkit state   repair -config F [-chain ID] -height H
  signerkit state   import -config F [-chain ID] -from FILE [-node URL] [-force]
  signerkit identity show -config F [-for PROTOCOL]
  signerkit demo    [-metrics 127.0.0.1:26661] [-interval 250ms] [-heights N]
  signerkit party   -config party.toml [-init-height H | -import-state FILE [-chain C]]
  signerkit threshold split  -from FILE -out DIR [-t 2] [-n 3] [-scheme frost-ed25519 (-from's key) or dkls23-secp256k1 (a new key)]
  signerkit threshold certs  -out DIR [-parties 3] [-coordinators 1]
  signerkit threshold dkg    -id I -ceremony ID -listen ADDR -peers ID=ADDR,... -cert F -key F -ca F -out DIR [-t 2] [-n 3] [-timeout 10m] [-scheme frost-ed25519 or dkls23-secp256k1]
  signerkit threshold show   -share FILE
  signerkit threshold export -share FILE -out FILE -passphrase-source SRC [-scrypt-log-n 17]
  signerkit threshold import -from FILE -out FILE -passphrase-source SRC
  signerkit version
  signerkit help    [COMMAND [SUBCOMMAND]]
`

// errUsage makes main exit 2.
var errUsage = errors.New("usage")

func main() {
	err := run(os.Args[1:], os.Stdout, os.Stderr)
	code := exitCode(err)
	if code == 1 {
		fmt.Fprintln(os.Stderr, err)
	}
	os.Exit(code)
}

// dispatch runs the command args names (help.go's route has checked its
// subcommand).
func dispatch(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return errUsage
	}
	switch args[0] {
	case "start":
		return cmdStart(args[1:], stderr)
	case "init":
		return cmdInit(args[1:], stdout, stderr)
	case "keys":
		return cmdKeys(args[1:], stdout, stderr)
	case "state":
		return cmdState(args[1:], stdout, stderr)
	case "identity":
		return cmdIdentity(args[1:], stdout, stderr)
	case "yubihsm":
		return cmdYubiHSM(args[1:], stdout, stderr)
	case "demo":
		return cmdDemo(args[1:], stdout, stderr)
	case "party":
		return cmdParty(args[1:], stdout, stderr)
	case "threshold":
		return cmdThreshold(args[1:], stdout, stderr)
	case "version", "-version", "--version":
		return cmdVersion(args[1:], stdout, stderr)
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	fmt.Fprintf(stderr, "signerkit: unknown command %q\n\n%s", args[0], usage)
	return errUsage
}

func newFlags(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("signerkit "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(fs.Output(), flagHelp(fs)) }
	return fs
}

func newLogger(cfg *daemon.Config, w io.Writer) *slog.Logger {
	var level slog.Level
	switch cfg.LogLevel {
	case "debug":
		level = slog.LevelDebug
	case "warn":
		level = slog.LevelWarn
	case "error":
		level = slog.LevelError
	}
	opts := &slog.HandlerOptions{Level: level}
	if cfg.LogFormat == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

func cmdStart(args []string, stderr io.Writer) error {
	fs := newFlags("start", stderr)
	path := fs.String("config", "signerkit.toml", "the config file")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	cfg, err := daemon.LoadConfig(*path)
	if err != nil {
		return err
	}
	log := newLogger(cfg, stderr)
	slog.SetDefault(log) // backends that log without a logger of their own (threshold)
	if err := hardening.DisableCoreDumps(); err != nil {
		log.Warn("core dumps stay enabled: a crash could write key material to disk", "err", err)
	}
	return serve(context.Background(), cfg, daemon.Options{Logger: log, Version: buildVersion()}, log, nil)
}

// serve runs a daemon until SIGTERM or SIGINT, or until ctx ends,
// reloading on SIGHUP. started, if not nil, is called once the daemon is
// made. The signal goroutine ends before serve returns.
func serve(ctx context.Context, cfg *daemon.Config, opts daemon.Options, log *slog.Logger, started func(*daemon.Daemon)) error {
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	defer signal.Stop(sigs)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	d, err := daemon.New(ctx, cfg, opts)
	if err != nil {
		return err
	}
	keys := d.PublicKeys()
	for _, ch := range cfg.Chains {
		log.Info("serving chain", "chain", ch.ID, "protocol", ch.Protocol, "backend", daemon.Scheme(ch.Key),
			"pubkey", fmt.Sprintf("ed25519:%x", []byte(keys[ch.ID])))
	}
	if id := d.IdentityKey(); id != nil {
		log.Info("identity", "key", fmt.Sprintf("ed25519:%x", []byte(id)))
	}
	if a := d.MetricsAddr(); a != "" {
		log.Info("metrics", "url", "http://"+a+"/metrics")
	}
	if started != nil {
		started(d)
	}
	// signal.Stop never closes sigs, so the goroutine ends on done.
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-done:
				return
			case s := <-sigs:
				if s == syscall.SIGHUP {
					if err := d.Reload(); err != nil {
						log.Error("reload failed; keeping the allowlists as they were", "err", err)
					}
					continue
				}
				log.Info("signal", "signal", s.String())
				cancel()
			}
		}
	})
	err = d.Run(ctx)
	close(done)
	wg.Wait()
	return err
}
