// Command ledgersim serves a simulated Ledger running the Tendermint validator
// app (ledger/ledgersim) on a Speculos-compatible APDU TCP port, so that any
// Ledger client that can talk to the Speculos emulator — signerkit's
// ledger:speculos= URIs, ledgerblue with LEDGER_PROXY_ADDRESS/PORT, ledgercomm's
// tcp interface, @ledgerhq/hw-transport-node-speculos, tmkms's and gnoverse's
// Speculos transports — can be pointed at it instead of a device.
//
// Usage:
//
//	ledgersim [flags]
//
//	ledgersim -addr 127.0.0.1:9999                  # Speculos's default --apdu-port
//	ledgersim -addr 127.0.0.1:0 -seed $(openssl rand -hex 32)
//	ledgersim -profile nanos -time realtime        # a Nano S, at the device's pace
//	ledgersim -confirm reject                       # the user rejects the first sign
//	ledgersim -fault unplug                         # the cable is pulled on the first APDU
//
// Flags:
//
//	-addr           address to listen on (default 127.0.0.1:9999); :0 picks a free port
//	-profile        nanosplus (default) or nanos (the 1024-byte sign buffer)
//	-time           accounted (answer at once) or realtime (sleep the modeled
//	                sign, confirmation and USB time); empty means accounted
//	                unless SIGNERKIT_SIM=realtime. Through a TCP port no modeled
//	                time reaches a standard Speculos client, so only realtime
//	                shows it; signerkit's ledger client pointed here with
//	                ledgersim.SpeculosDialer (a ledgersim:speculos=HOST:PORT
//	                URI) gets the modeled time in its trace, and in
//	                accounted mode its deadline is honoured in modeled time
//	-seed           hex Ed25519 seed (32 bytes) of the app's key; default random
//	-confirm        accept (default) or reject: what the user answers to the
//	                first sign after the app starts
//	-confirm-delay  how long the user takes to answer (modeled time)
//	-raw            a generic Ed25519 signer with no vote parser and no
//	                double-sign rules: NOT the validator app
//	-long-prefix    accept sign bytes with a length prefix longer than one byte
//	-fault          faults for the first APDUs, comma-separated, in order:
//	                unplug (the device goes away after receiving the APDU)
//	                and hang (the APDU is lost); send SIGHUP to plug the
//	                device back in
//
// On start it prints the address it listens on, HOST:PORT, as the one line of
// its standard output (so a script can start it with -addr 127.0.0.1:0 and
// read where it listens), and logs the app's public key on standard error.
// Like Speculos it serves one client at a time: a new connection replaces the
// old one. SIGINT or SIGTERM shut it down; it then exits 0.
//
// Speculos's protocol (speculos/mcu/apdu.py): the client sends each command
// APDU as a 4-byte big-endian length and the APDU; the server answers with
// a 4-byte big-endian length of the response data, the data and the 2-byte
// status word.
package main

import (
	"context"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"

	"github.com/signerkit/signerkit/ledger/ledgersim"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr, hup); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "ledgersim:", err)
		}
		os.Exit(2)
	}
}

// speculosFaults are the faults that show through the Speculos face; the
// others are HID-level.
var speculosFaults = []ledgersim.Fault{ledgersim.FaultUnplug, ledgersim.FaultHang}

func faultNamed(name string) (ledgersim.Fault, bool) {
	for _, f := range ledgersim.Faults() {
		if f.String() == name {
			return f, true
		}
	}
	return 0, false
}

func parseFaults(s string) ([]ledgersim.Fault, error) {
	var names []string
	for _, f := range speculosFaults {
		names = append(names, f.String())
	}
	var out []ledgersim.Fault
	for _, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		f, ok := faultNamed(item)
		switch {
		case !ok:
			return nil, fmt.Errorf("-fault: unknown fault %q (want %s)", item, strings.Join(names, ", "))
		case !slices.Contains(speculosFaults, f):
			return nil, fmt.Errorf("-fault: %s is a HID-level fault, which the Speculos face does not show (want %s)", item, strings.Join(names, ", "))
		}
		out = append(out, f)
	}
	return out, nil
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer, replug <-chan os.Signal) error {
	fs := flag.NewFlagSet("ledgersim", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:9999", "`address` to listen on; :0 picks a free port")
	profile := fs.String("profile", "nanosplus", "latency `profile`: nanosplus or nanos")
	timeMode := fs.String("time", "", "`mode` of modeled time: accounted or realtime (empty: accounted unless SIGNERKIT_SIM=realtime)")
	seedHex := fs.String("seed", "", "`hex` Ed25519 seed (32 bytes) of the app's key; empty means random")
	confirm := fs.String("confirm", "accept", "what the user answers to the first sign: accept or reject")
	confirmDelay := fs.Duration("confirm-delay", 0, "how long the user takes to answer (modeled `time`)")
	raw := fs.Bool("raw", false, "sign any bytes, with no vote parser and no double-sign rules (NOT the validator app)")
	longPrefix := fs.Bool("long-prefix", false, "accept sign bytes with a length prefix of more than one byte")
	fault := fs.String("fault", "", "`faults` for the first APDUs, comma-separated, in order: unplug, hang")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments: %q", fs.Args())
	}

	cfg := ledgersim.Config{Raw: *raw, LongPrefix: *longPrefix, ConfirmDelay: *confirmDelay}
	switch *profile {
	case "nanosplus":
		cfg.Profile = ledgersim.NanoSPlus
	case "nanos":
		cfg.Profile = ledgersim.NanoS
	default:
		return fmt.Errorf("-profile: unknown profile %q (want nanosplus or nanos)", *profile)
	}
	switch *timeMode {
	case "":
		cfg.Time = ledgersim.TimeFromEnv
	case "accounted":
		cfg.Time = ledgersim.Accounted
	case "realtime":
		cfg.Time = ledgersim.Realtime
	default:
		return fmt.Errorf("-time: unknown mode %q (want accounted or realtime)", *timeMode)
	}
	switch *confirm {
	case "accept":
		cfg.Confirm = ledgersim.Accept
	case "reject":
		cfg.Confirm = ledgersim.Reject
	default:
		return fmt.Errorf("-confirm: want accept or reject, not %q", *confirm)
	}
	if *confirmDelay < 0 {
		return fmt.Errorf("-confirm-delay: must not be negative")
	}
	if *seedHex != "" {
		seed, err := hex.DecodeString(*seedHex)
		if err != nil || len(seed) != 32 {
			return fmt.Errorf("-seed: want 32 bytes in hex")
		}
		cfg.Seed = seed
	}
	faults, err := parseFaults(*fault)
	if err != nil {
		return err
	}
	dev, err := ledgersim.New(cfg)
	if err != nil {
		return err
	}

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	sp := dev.ServeSpeculosOn(ln)
	defer sp.Close()

	fmt.Fprintf(stderr, "ledgersim: %s, ed25519 public key %x\n", dev.Profile().Name, []byte(dev.PublicKey()))
	for _, f := range faults {
		dev.Inject(f)
	}
	fmt.Fprintln(stdout, sp.Addr())

	for {
		select {
		case <-ctx.Done():
			return nil
		case <-replug:
			dev.Replug()
			fmt.Fprintln(stderr, "ledgersim: replugged")
		}
	}
}
