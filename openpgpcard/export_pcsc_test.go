//go:build cgo && linux

package openpgpcard

import "fmt"

// BareTransmit runs one SCardTransmit of apdu on a PC/SC transport on the
// caller's goroutine, without the goroutine that lets a context bound
// Exchange: the floor BenchmarkPCSCFloor measures beside this package's
// path.
func BareTransmit(tr Transport, apdu []byte) ([]byte, error) {
	t, ok := tr.(*pcscTransport)
	if !ok {
		return nil, fmt.Errorf("openpgpcard: %T is not a PC/SC transport", tr)
	}
	return t.transmit(apdu)
}
