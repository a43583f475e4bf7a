// Command cardsim puts a simulated OpenPGP card (openpgpcard/cardsim) in
// vsmartcard's virtual reader, so that the whole PC/SC stack — pcscd with
// Debian's vsmartcard-vpcd driver, GnuPG's scdaemon, OpenSC, ykman and
// signerkit's openpgpcard backend — talks to it as to a USB token.
//
// Usage:
//
//	cardsim [flags]
//
//	cardsim                                   # vpcd at 127.0.0.1:35963, a YubiKey 4
//	cardsim -vpcd 127.0.0.1:40001 -profile fst01 -time realtime
//
// Flags:
//
//	-vpcd     host:port where vpcd listens for a virtual card (its reader.conf
//	          DEVICENAME /dev/null:PORT); default 127.0.0.1:35963
//	-profile  yubikey4 (default), yubikey-neo, fst01, nitrokey-start,
//	          nitrokey-pro or instant: the token whose algorithms and
//	          latency the card models
//	-time     accounted (answer at once) or realtime (sleep the modeled
//	          time); empty means accounted unless SIGNERKIT_SIM=realtime
//	-pw1      the user PIN (default 123456)
//	-pw3      the admin PIN (default 12345678)
//
// The card stays inserted while the connection lasts; when vpcd closes it
// (pcscd stopped), cardsim connects again as soon as vpcd listens. SIGINT
// or SIGTERM remove the card and exit 0. The card's state lives in memory
// only: keys generated on it (gpg --card-edit, generate) or imported to it
// (gpg --edit-key, keytocard) are gone when it exits.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/signerkit/signerkit/internal/simtime"
	"github.com/signerkit/signerkit/openpgpcard/cardsim"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(0)
		}
		fmt.Fprintln(os.Stderr, "cardsim:", err)
		os.Exit(2)
	}
}

func profileNamed(name string) (cardsim.Profile, error) {
	for _, p := range append(cardsim.Profiles(), cardsim.Instant) {
		if p.Short() == name {
			return p, nil
		}
	}
	return cardsim.Profile{}, fmt.Errorf("-profile %q: not yubikey4, yubikey-neo, fst01, nitrokey-start, nitrokey-pro or instant", name)
}

func run(args []string) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return runContext(ctx, args)
}

// runContext serves the card until ctx ends.
func runContext(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("cardsim", flag.ContinueOnError)
	addr := fs.String("vpcd", "127.0.0.1:"+strconv.Itoa(cardsim.VPCDPort), "host:port where vpcd listens")
	profile := fs.String("profile", "yubikey4", "the token modeled")
	mode := fs.String("time", "", "accounted or realtime")
	pw1 := fs.String("pw1", cardsim.DefaultPW1, "user PIN")
	pw3 := fs.String("pw3", cardsim.DefaultPW3, "admin PIN")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	p, err := profileNamed(*profile)
	if err != nil {
		return err
	}
	tm := simtime.ModeFromEnv()
	switch *mode {
	case "":
	case "accounted":
		tm = simtime.Accounted
	case "realtime":
		tm = simtime.Realtime
	default:
		return fmt.Errorf("-time %q: not accounted or realtime", *mode)
	}
	card := cardsim.New(cardsim.Config{Profile: p, Time: tm, PW1: *pw1, PW3: *pw3})
	log.Printf("cardsim: %s card, %s time, for vpcd at %s", p.Name, tm, *addr)
	for ctx.Err() == nil {
		err := card.DialVPCD(ctx, *addr, 200*time.Millisecond, func() { log.Printf("cardsim: card inserted") })
		if ctx.Err() != nil {
			break
		}
		log.Printf("cardsim: card removed: %v", err)
		card.Insert()
		select {
		case <-ctx.Done():
		case <-time.After(200 * time.Millisecond):
		}
	}
	return nil
}
