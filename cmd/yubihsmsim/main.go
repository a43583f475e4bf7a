// Command yubihsmsim serves a simulated YubiHSM 2 (yubihsm/yubihsmsim) as a
// yubihsm-connector: POST /connector/api and GET /connector/status on an HTTP
// address, so that any YubiHSM client — signerkit's yubihsm backend,
// certusone/yubihsm-go, Yubico's yubihsm-shell, libyubihsm, python-yubihsm,
// yubihsm_pkcs11 — can be pointed at it instead of a real connector and device.
//
// Usage:
//
//	yubihsmsim [flags]
//
//	yubihsmsim -addr 127.0.0.1:12345                        # the connector's default address
//	yubihsmsim -addr 127.0.0.1:0 -seed $(openssl rand -hex 32) -key-id 0x0064 -label validator
//	yubihsmsim -time realtime -password s3cret
//	yubihsmsim -fault small-order-key                       # a device that lies about its keys
//
// Flags:
//
//	-addr      address to listen on (default 127.0.0.1:12345); :0 picks a free port
//	-profile   latency profile: yubihsm2 (Yubico's published sign times) or none
//	-time      accounted (answer at once, report modeled time in the
//	           X-Signerkit-Modeled header) or realtime (also sleep it); empty
//	           means accounted unless SIGNERKIT_SIM=realtime. Accounted time
//	           honours the deadline that yubihsmsim.HTTPClient sends
//	           (X-Signerkit-Time-Left): a command that would run past it
//	           is executed and answered 504
//	-password  password of the factory authentication key, object 1 (default "password")
//	-serial    the device's serial number (default 12345678)
//	-seed      hex Ed25519 seed (32 bytes) of a key to put on the device at start
//	-key-id    object id of that key, hex (default 0: the device picks one)
//	-label     label of that key (default "validator")
//	-fault     faults to turn on at start, comma-separated: unplugged, hang,
//	           corrupt-mac, garble, wrong-length, small-order-key; NAME=N turns
//	           a fault on for the next N responses only
//
// On start it prints the connector's URL, http://HOST:PORT, as the one line
// of its standard output (so a script can start it with -addr 127.0.0.1:0 and
// read where it listens), and logs the key it imported on standard error.
// SIGINT or SIGTERM shut it down; it then exits 0.
//
// The simulator holds its objects in memory only: every start is a factory-
// fresh device with the one authentication key and, with -seed, one key.
package main

import (
	"context"
	"crypto/ed25519"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	yubihsmgo "github.com/certusone/yubihsm-go"
	"github.com/certusone/yubihsm-go/commands"
	"github.com/certusone/yubihsm-go/connector"

	"github.com/signerkit/signerkit/yubihsm/yubihsmsim"
)

// faults maps the -fault names to the simulator's faults.
var faults = map[string]yubihsmsim.Fault{
	"unplugged":       yubihsmsim.FaultUnplugged,
	"hang":            yubihsmsim.FaultHang,
	"corrupt-mac":     yubihsmsim.FaultCorruptMAC,
	"garble":          yubihsmsim.FaultGarble,
	"wrong-length":    yubihsmsim.FaultWrongLength,
	"small-order-key": yubihsmsim.FaultSmallOrderKey,
}

// factoryAuthKeyLabel is the label a YubiHSM 2 gives its factory
// authentication key.
const factoryAuthKeyLabel = "DEFAULT AUTHKEY CHANGE THIS ASAP"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "yubihsmsim:", err)
		}
		os.Exit(2)
	}
}

type options struct {
	addr, profile, time, password, seed, keyID, label, fault string
	serial                                                   uint
}

func parseFlags(args []string, stderr io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("yubihsmsim", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.addr, "addr", "127.0.0.1:12345", "`address` to listen on; :0 picks a free port")
	fs.StringVar(&o.profile, "profile", "yubihsm2", "latency `profile`: yubihsm2 or none")
	fs.StringVar(&o.time, "time", "", "`mode` of modeled time: accounted or realtime (empty: accounted unless SIGNERKIT_SIM=realtime)")
	fs.StringVar(&o.password, "password", "password", "`password` of the factory authentication key (object 1)")
	fs.UintVar(&o.serial, "serial", 12345678, "the device's `serial` number")
	fs.StringVar(&o.seed, "seed", "", "`hex` Ed25519 seed (32 bytes) of a key to put on the device at start")
	fs.StringVar(&o.keyID, "key-id", "0", "object `id` (hex) of the -seed key; 0 lets the device pick")
	fs.StringVar(&o.label, "label", "validator", "`label` of the -seed key")
	fs.StringVar(&o.fault, "fault", "", "`faults` to turn on at start, comma-separated ("+strings.Join(faultNames(), ", ")+"); NAME=N for the next N responses only")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments: %q", fs.Args())
	}
	return o, nil
}

// faultNames lists the -fault names, sorted.
func faultNames() []string { return slices.Sorted(maps.Keys(faults)) }

type faultSpec struct {
	f yubihsmsim.Fault
	n int
}

func parseFaults(s string) ([]faultSpec, error) {
	var out []faultSpec
	for _, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		name, count, hasCount := strings.Cut(item, "=")
		f, ok := faults[name]
		if !ok {
			return nil, fmt.Errorf("-fault: unknown fault %q (want %s)", name, strings.Join(faultNames(), ", "))
		}
		n := 0
		if hasCount {
			var err error
			if n, err = strconv.Atoi(count); err != nil || n < 1 {
				return nil, fmt.Errorf("-fault: %s: count %q is not a positive number", name, count)
			}
		}
		out = append(out, faultSpec{f, n})
	}
	return out, nil
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	o, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	cfg := yubihsmsim.Config{NoDefaultAuthKey: true}
	switch o.profile {
	case "yubihsm2":
		cfg.Profile = &yubihsmsim.YubiHSM2
	case "none":
		cfg.Profile = &yubihsmsim.NoLatency
	default:
		return fmt.Errorf("-profile: unknown profile %q (want yubihsm2 or none)", o.profile)
	}
	switch o.time {
	case "":
		cfg.Time = yubihsmsim.TimeFromEnv
	case "accounted":
		cfg.Time = yubihsmsim.Accounted
	case "realtime":
		cfg.Time = yubihsmsim.Realtime
	default:
		return fmt.Errorf("-time: unknown mode %q (want accounted or realtime)", o.time)
	}
	if o.serial == 0 || o.serial > 0xffffffff {
		return fmt.Errorf("-serial: %d is not a 32-bit serial number above 0", o.serial)
	}
	cfg.Serial = uint32(o.serial)
	var seed []byte
	if o.seed != "" {
		if seed, err = hex.DecodeString(o.seed); err != nil || len(seed) != ed25519.SeedSize {
			return fmt.Errorf("-seed: want %d bytes in hex", ed25519.SeedSize)
		}
	}
	id, err := strconv.ParseUint(strings.TrimPrefix(strings.ToLower(o.keyID), "0x"), 16, 16)
	if err != nil || id == 0xffff {
		return fmt.Errorf("-key-id: %q is not an object id in hex", o.keyID)
	}
	if len(o.label) > 40 {
		return fmt.Errorf("-label: at most 40 bytes")
	}
	fs, err := parseFaults(o.fault)
	if err != nil {
		return err
	}

	dev := yubihsmsim.New(cfg)
	dev.AddAuthKey(1, factoryAuthKeyLabel, []byte(o.password), yubihsmsim.CapAll, yubihsmsim.CapAll, 0xffff)
	srv, err := yubihsmsim.Listen(dev, o.addr)
	if err != nil {
		return err
	}
	defer srv.Close()
	if seed != nil {
		got, err := putKey(srv.URL(), o.password, uint16(id), o.label, seed)
		if err != nil {
			return fmt.Errorf("importing the -seed key: %w", err)
		}
		pub := ed25519.NewKeyFromSeed(seed).Public().(ed25519.PublicKey)
		fmt.Fprintf(stderr, "yubihsmsim: key id=0x%04x label=%q ed25519 public key %x\n", got, o.label, []byte(pub))
	}
	for _, f := range fs {
		dev.Inject(f.f, f.n)
	}
	fmt.Fprintln(stdout, srv.URL())

	<-ctx.Done()
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		srv.Close() // requests held by a hang: cut them
	}
	return nil
}

// putKey puts the Ed25519 key of seed on the device at id (0: the device
// picks) with the yubihsm-go client, as a Put Asymmetric Key from any other
// client would, and returns the object id it got. The key may only sign
// (sign-eddsa) and lives in domain 1, where signerkit's yubihsm backend
// looks for keys by default.
func putKey(url, password string, id uint16, label string, seed []byte) (uint16, error) {
	conn := connector.NewHTTPConnector(strings.TrimPrefix(url, "http://"))
	m, err := yubihsmgo.NewSessionManager(conn, 1, password)
	if err != nil {
		return 0, err
	}
	defer m.Destroy()
	cmd, err := commands.CreatePutAsymmetricKeyCommand(id, []byte(label), 1, commands.CapabilityAsymmetricSignEddsa, commands.AlgorithmED25519, seed, nil)
	if err != nil {
		return 0, err
	}
	r, err := m.SendEncryptedCommand(cmd)
	if err != nil {
		return 0, err
	}
	put, ok := r.(*commands.PutAsymmetricKeyResponse)
	if !ok {
		return 0, fmt.Errorf("unexpected response %T", r)
	}
	return put.KeyID, nil
}
