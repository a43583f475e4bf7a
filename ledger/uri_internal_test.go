package ledger

import (
	"context"
	"net"
	"testing"
)

// The registered OpenFunc returns a nil interface with every error, not a
// nil *Signer in a non-nil interface.
func TestOpenURINilOnError(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	for _, uri := range []string{
		"ledger:?chunk-size=0",              // ParseURI fails
		"ledger:speculos=" + addr,           // Open fails: nothing listens
		"ledger:hid=/dev/signerkit-no-such", // Open fails: no such device, or no cgo
	} {
		s, err := openURI(context.Background(), uri, nil)
		if err == nil {
			t.Errorf("%s: no error", uri)
		}
		if s != nil {
			t.Errorf("%s: returned a non-nil signer.Signer (%T) with %v", uri, s, err)
		}
	}
}
