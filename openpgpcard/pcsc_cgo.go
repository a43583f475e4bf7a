//go:build cgo && linux

package openpgpcard

/*
#cgo LDFLAGS: -ldl
#include <dlfcn.h>
#include <stdlib.h>

// pcsc-lite's types on Linux (winscard.h, pcsclite.h): LONG and DWORD are
// the C long types. The library is loaded at run time, so building needs
// no pcsc-lite headers and a machine without pcsc-lite still runs.
typedef long sk_long;
typedef unsigned long sk_dword;
typedef struct { sk_dword proto; sk_dword len; } sk_io_request;

static void *sk_lib;
static sk_long (*sk_establish)(sk_dword, const void *, const void *, sk_long *);
static sk_long (*sk_release)(sk_long);
static sk_long (*sk_list)(sk_long, const char *, char *, sk_dword *);
static sk_long (*sk_connect)(sk_long, const char *, sk_dword, sk_dword, sk_long *, sk_dword *);
static sk_long (*sk_disconnect)(sk_long, sk_dword);
static sk_long (*sk_transmit)(sk_long, const sk_io_request *, const unsigned char *, sk_dword, sk_io_request *, unsigned char *, sk_dword *);

// sk_load opens libpcsclite once; it returns 0 on success.
static int sk_load(void) {
	if (sk_lib) return 0;
	void *l = dlopen("libpcsclite.so.1", RTLD_NOW);
	if (!l) return -1;
	sk_establish = dlsym(l, "SCardEstablishContext");
	sk_release = dlsym(l, "SCardReleaseContext");
	sk_list = dlsym(l, "SCardListReaders");
	sk_connect = dlsym(l, "SCardConnect");
	sk_disconnect = dlsym(l, "SCardDisconnect");
	sk_transmit = dlsym(l, "SCardTransmit");
	if (!sk_establish || !sk_release || !sk_list || !sk_connect || !sk_disconnect || !sk_transmit) {
		dlclose(l);
		return -2;
	}
	sk_lib = l;
	return 0;
}

static sk_long sk_establish_ctx(sk_long *ctx) { return sk_establish(2, NULL, NULL, ctx); } // SCARD_SCOPE_SYSTEM
static sk_long sk_release_ctx(sk_long ctx) { return sk_release(ctx); }
static sk_long sk_list_readers(sk_long ctx, char *buf, sk_dword *n) { return sk_list(ctx, NULL, buf, n); }
static sk_long sk_connect_reader(sk_long ctx, const char *name, sk_long *h, sk_dword *proto) {
	return sk_connect(ctx, name, 2, 1 | 2, h, proto); // SCARD_SHARE_SHARED, T=0 | T=1
}
static sk_long sk_disconnect_card(sk_long h) { return sk_disconnect(h, 0); } // SCARD_LEAVE_CARD
static sk_long sk_transmit_apdu(sk_long h, sk_dword proto, const unsigned char *in, sk_dword inLen, unsigned char *out, sk_dword *outLen) {
	sk_io_request pci = { proto, sizeof(sk_io_request) };
	return sk_transmit(h, &pci, in, inLen, NULL, out, outLen);
}
*/
import "C"

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"unsafe"

	"github.com/signerkit/signerkit/signer"
)

// PCSCError is a PC/SC call that failed, with pcsc-lite's return code.
// It unwraps to signer.ErrDeviceNotFound (no service, reader or card),
// signer.ErrDisconnected (the card removed or reset, or the transfer to it
// failed) or signer.ErrProtocol.
type PCSCError struct {
	Call string
	Code uint32
}

func (e *PCSCError) Error() string {
	return fmt.Sprintf("openpgpcard: PC/SC %s: %s (0x%08x)", e.Call, pcscCodeName(e.Code), e.Code)
}

// Unwrap returns the signer sentinel the code means.
func (e *PCSCError) Unwrap() error {
	switch e.Code {
	case 0x8010001D, 0x8010002E, 0x8010000C, 0x80100017, 0x80100009: // no service, no readers, no card, reader unavailable, unknown reader
		return signer.ErrDeviceNotFound
	case 0x80100069, 0x80100068, 0x80100067, 0x80100016: // removed, reset, unpowered, the reader's transfer failed
		return signer.ErrDisconnected
	}
	return signer.ErrProtocol
}

// pcscCodeName names the codes this package meets.
func pcscCodeName(code uint32) string {
	switch code {
	case 0x8010001D:
		return "the PC/SC service (pcscd) is not running"
	case 0x8010002E:
		return "no reader"
	case 0x8010000C:
		return "no card in the reader"
	case 0x80100017:
		return "reader unavailable"
	case 0x80100009:
		return "unknown reader"
	case 0x80100069:
		return "card removed"
	case 0x80100068:
		return "card reset"
	case 0x80100067:
		return "card unpowered"
	case 0x80100008:
		return "buffer too small"
	case 0x8010000A:
		return "timeout"
	case 0x80100016:
		return "transaction failed"
	}
	return "failed"
}

// ErrNoLibrary says libpcsclite.so.1 could not be loaded. It wraps
// signer.ErrDeviceNotFound.
var ErrNoLibrary = fmt.Errorf("openpgpcard: PC/SC: libpcsclite.so.1 cannot be loaded (install pcsc-lite): %w", signer.ErrDeviceNotFound)

var loadOnce = sync.OnceValue(func() error {
	if C.sk_load() != 0 {
		return ErrNoLibrary
	}
	return nil
})

func pcscErr(call string, rv C.sk_long) error {
	if rv == 0 {
		return nil
	}
	return &PCSCError{Call: call, Code: uint32(rv)}
}

// PCSCDialer returns a Dialer that connects through pcsc-lite to the card
// in the first reader whose name contains reader, or, with an empty
// reader, to the first card that selects the OpenPGP application. It
// connects in shared mode, so other PC/SC clients (scdaemon in shared
// mode, OpenSC) can use the card between commands.
func PCSCDialer(reader string) Dialer {
	return func(ctx context.Context) (Transport, error) { return dialPCSC(ctx, reader) }
}

func dialPCSC(ctx context.Context, want string) (Transport, error) {
	if err := loadOnce(); err != nil {
		return nil, err
	}
	var hctx C.sk_long
	if err := pcscErr("SCardEstablishContext", C.sk_establish_ctx(&hctx)); err != nil {
		return nil, err
	}
	names, err := listReaders(hctx)
	if err != nil {
		C.sk_release_ctx(hctx)
		return nil, err
	}
	var lastErr error = fmt.Errorf("openpgpcard: no PC/SC reader holds an OpenPGP card: %w", signer.ErrDeviceNotFound)
	for _, name := range names {
		if want != "" && !strings.Contains(name, want) {
			continue
		}
		t, err := connectReader(hctx, name)
		if err != nil {
			lastErr = err
			continue
		}
		if want != "" || t.selectsOpenPGP(ctx) {
			return t, nil
		}
		// Not an OpenPGP card: let it go, once a SELECT abandoned on ctx
		// has returned (closed first, so that it finds the transport
		// closed rather than its buffer freed).
		t.once.Do(func() { close(t.closed) })
		t.mu.Lock()
		C.sk_disconnect_card(t.h)
		C.free(t.buf)
		t.buf = nil
		t.mu.Unlock()
		if err := ctx.Err(); err != nil {
			C.sk_release_ctx(hctx)
			return nil, fmt.Errorf("openpgpcard: looking for an OpenPGP card: %w", err)
		}
	}
	C.sk_release_ctx(hctx)
	if want != "" {
		if _, ok := lastErr.(*PCSCError); !ok {
			lastErr = fmt.Errorf("openpgpcard: no PC/SC reader named like %q: %w", want, signer.ErrDeviceNotFound)
		}
	}
	return nil, lastErr
}

func listReaders(hctx C.sk_long) ([]string, error) {
	var n C.sk_dword
	if err := pcscErr("SCardListReaders", C.sk_list_readers(hctx, nil, &n)); err != nil {
		return nil, err
	}
	if n == 0 || n > 1<<16 {
		return nil, &PCSCError{Call: "SCardListReaders", Code: 0x8010002E}
	}
	cbuf := (*C.char)(C.malloc(C.size_t(n)))
	defer C.free(unsafe.Pointer(cbuf))
	if err := pcscErr("SCardListReaders", C.sk_list_readers(hctx, cbuf, &n)); err != nil {
		return nil, err
	}
	buf := C.GoBytes(unsafe.Pointer(cbuf), C.int(n))
	var names []string
	for _, b := range bytes.Split(buf[:n], []byte{0}) {
		if len(b) > 0 {
			names = append(names, string(b))
		}
	}
	return names, nil
}

// pcscTransport is one card connection. Exchanges run one at a time; an
// exchange abandoned on its context leaves the connection to be closed
// when the call returns.
type pcscTransport struct {
	hctx  C.sk_long
	h     C.sk_long
	proto C.sk_dword

	mu     sync.Mutex     // one SCardTransmit at a time; guards the buffers
	buf    unsafe.Pointer // C memory: a command (pcscBuf bytes), then room for its response (pcscBuf)
	once   sync.Once
	closed chan struct{}
}

// pcscBuf is the size of each half of a transport's C buffer: the
// longest extended response (65536 bytes and the status word), and any
// command an extended APDU carries (65535 bytes, a header and Lc/Le).
const pcscBuf = 65536 + 9

func connectReader(hctx C.sk_long, name string) (*pcscTransport, error) {
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	t := &pcscTransport{hctx: hctx, closed: make(chan struct{})}
	if err := pcscErr("SCardConnect", C.sk_connect_reader(hctx, cname, &t.h, &t.proto)); err != nil {
		return nil, err
	}
	t.buf = C.malloc(2 * pcscBuf)
	return t, nil
}

func (t *pcscTransport) selectsOpenPGP(ctx context.Context) bool {
	resp, err := t.Exchange(ctx, append([]byte{0x00, 0xA4, 0x04, 0x00, byte(len(applicationID))}, applicationID...))
	return err == nil && len(resp) >= 2 && (resp[len(resp)-2] == 0x90 || resp[len(resp)-2] == 0x61)
}

// Exchange runs SCardTransmit in a goroutine so that ctx bounds it
// (pcsc-lite cannot cancel a transmit).
func (t *pcscTransport) Exchange(ctx context.Context, apdu []byte) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	type result struct {
		resp []byte
		err  error
	}
	done := make(chan result, 1)
	go func() {
		resp, err := t.transmit(apdu)
		done <- result{resp, err}
	}()
	select {
	case r := <-done:
		return r.resp, r.err
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-t.closed:
		return nil, fmt.Errorf("openpgpcard: %w", signer.ErrClosed)
	}
}

// transmit is one SCardTransmit, on the caller's goroutine: the command
// is copied into the transport's C buffer, the card's response read back
// from it into the one Go slice returned.
func (t *pcscTransport) transmit(apdu []byte) ([]byte, error) {
	if len(apdu) == 0 || len(apdu) > pcscBuf {
		return nil, fmt.Errorf("openpgpcard: %d-byte APDU: %w", len(apdu), signer.ErrInvalidMessage)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	select {
	case <-t.closed:
		return nil, fmt.Errorf("openpgpcard: %w", signer.ErrClosed)
	default:
	}
	if t.buf == nil { // freed: the transport is let go
		return nil, fmt.Errorf("openpgpcard: %w", signer.ErrClosed)
	}
	buf := unsafe.Slice((*byte)(t.buf), 2*pcscBuf)
	in, out := buf[:pcscBuf], buf[pcscBuf:]
	copy(in, apdu)
	n := C.sk_dword(pcscBuf)
	rv := C.sk_transmit_apdu(t.h, t.proto, (*C.uchar)(unsafe.Pointer(&in[0])), C.sk_dword(len(apdu)), (*C.uchar)(unsafe.Pointer(&out[0])), &n)
	if err := pcscErr("SCardTransmit", rv); err != nil {
		return nil, err
	}
	if n == 0 || n > pcscBuf {
		// A card always answers with a status word; vpcd's reader
		// returns nothing when its card went away mid-command.
		return nil, fmt.Errorf("openpgpcard: PC/SC: an empty response (the card went away mid-command): %w", signer.ErrDisconnected)
	}
	return bytes.Clone(out[:n]), nil
}

// Close disconnects (leaving the card powered) once any exchange in flight
// returns. Close is idempotent.
func (t *pcscTransport) Close() error {
	t.once.Do(func() {
		close(t.closed)
		go t.disconnect()
	})
	return nil
}

func (t *pcscTransport) disconnect() {
	t.mu.Lock()
	defer t.mu.Unlock()
	C.sk_disconnect_card(t.h)
	C.sk_release_ctx(t.hctx)
	C.free(t.buf)
	t.buf = nil
}
