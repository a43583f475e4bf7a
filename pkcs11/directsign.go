//go:build cgo && unix

package pkcs11

/*
#cgo linux LDFLAGS: -ldl
#include <dlfcn.h>
#include <stdlib.h>

// The PKCS#11 types this file needs, as the standard's pkcs11t.h defines
// them on Unix (CK_ULONG is unsigned long, structures unpacked).
typedef unsigned long ds_ulong;
typedef struct {
	ds_ulong mechanism;
	void *parameter;
	ds_ulong parameter_len;
} ds_mechanism;
typedef ds_ulong (*ds_sign_init)(ds_ulong session, ds_mechanism *mech, ds_ulong key);
typedef ds_ulong (*ds_sign)(ds_ulong session, unsigned char *data, ds_ulong data_len, unsigned char *sig, ds_ulong *sig_len);

// CK_FUNCTION_LIST: CK_VERSION, then the functions in the standard's
// order, of which C_SignInit and C_Sign are the 43rd and 44th.
typedef struct {
	unsigned char major, minor;
	void *fn[44];
} ds_function_list;
#define DS_SIGN_INIT 42
#define DS_SIGN 43

typedef struct {
	ds_sign_init sign_init;
	ds_sign sign;
} ds_funcs;

// ds_lookup fills f from the function list of the module loaded from path
// (dlopen with RTLD_NOLOAD finds what miekg/pkcs11 opened); 0 when it did.
// Lists of Cryptoki 2.x and later share this layout (3.0 modules return
// the 2.x-compatible CK_FUNCTION_LIST here).
static int ds_lookup(const char *path, ds_funcs *f) {
	void *h = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
	if (h == NULL) {
		return -1;
	}
	ds_ulong (*get)(ds_function_list **) = (ds_ulong (*)(ds_function_list **))dlsym(h, "C_GetFunctionList");
	ds_function_list *fl = NULL;
	int r = -1;
	if (get != NULL && get(&fl) == 0 && fl != NULL && fl->major >= 2 && fl->fn[DS_SIGN_INIT] != NULL && fl->fn[DS_SIGN] != NULL) {
		f->sign_init = (ds_sign_init)fl->fn[DS_SIGN_INIT];
		f->sign = (ds_sign)fl->fn[DS_SIGN];
		r = 0;
	}
	dlclose(h); // miekg/pkcs11 still holds the library
	return r;
}

// ds_sign_once is C_SignInit then C_Sign into sig, whose capacity is
// *sig_len, in one call from Go. failed says which call returned the
// error: 1 for C_SignInit, 2 for C_Sign. On CKR_BUFFER_TOO_SMALL the
// operation is still active and *sig_len is the length needed.
static ds_ulong ds_sign_once(ds_funcs *f, ds_ulong session, ds_ulong mech, void *param, ds_ulong param_len,
		ds_ulong key, unsigned char *data, ds_ulong data_len, unsigned char *sig, ds_ulong *sig_len, int *failed) {
	ds_mechanism m = {mech, param, param_len};
	ds_ulong rv = f->sign_init(session, &m, key);
	if (rv != 0) {
		*failed = 1;
		return rv;
	}
	rv = f->sign(session, data, data_len, sig, sig_len);
	if (rv != 0) {
		*failed = 2;
	}
	return rv;
}

static ds_ulong ds_sign_more(ds_funcs *f, ds_ulong session, unsigned char *data, ds_ulong data_len, unsigned char *sig, ds_ulong *sig_len) {
	return f->sign(session, data, data_len, sig, sig_len);
}
*/
import "C"

import (
	"runtime"
	"unsafe"

	p11 "github.com/miekg/pkcs11"
)

// directSigner calls the module's C_SignInit and C_Sign itself, in one
// call from Go, with a buffer of the signature's known length. miekg/pkcs11
// makes three (C_SignInit, C_Sign for the length, C_Sign again) and builds
// its mechanism in C memory each time; every call into a software token
// takes its locks, so the direct path is both faster and less contended.
type directSigner struct {
	f *C.ds_funcs // C memory: its function pointers never move
}

// lookupDirect finds C_SignInit and C_Sign of the module miekg/pkcs11
// loaded from path; nil when it cannot, and signs go through
// miekg/pkcs11.
func lookupDirect(path string) *directSigner {
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	f := (*C.ds_funcs)(C.calloc(1, C.size_t(unsafe.Sizeof(C.ds_funcs{}))))
	if f == nil {
		return nil
	}
	if C.ds_lookup(cpath, f) != 0 {
		C.free(unsafe.Pointer(f))
		return nil
	}
	return &directSigner{f: f}
}

// free releases the function table; the module must not be used through
// d afterwards.
func (d *directSigner) free() {
	if d != nil && d.f != nil {
		C.free(unsafe.Pointer(d.f))
		d.f = nil
	}
}

// maxSigLen bounds the length a module may ask for on
// CKR_BUFFER_TOO_SMALL (an RSA-16384 signature is 2048 bytes): a larger
// one is a broken module, and its error is returned rather than the
// buffer allocated.
const maxSigLen = 1 << 16

// sign runs C_SignInit(mech, param) on key and C_Sign on data in session
// sh, expecting a signature of at most sigLen bytes (a longer one costs a
// second C_Sign). It returns the number of calls made into the module;
// the error is an *Error naming the call that failed.
func (d *directSigner) sign(sh p11.SessionHandle, mech uint, param []byte, key p11.ObjectHandle, data []byte, sigLen int) (sig []byte, calls int64, err error) {
	if sigLen < 1 {
		sigLen = 1
	}
	sig = make([]byte, sigLen)
	n := C.ds_ulong(sigLen)
	var failed C.int
	// Go memory passed for the call's duration only: none holds a Go
	// pointer, and the module must not keep them (PKCS#11 says so).
	rv := C.ds_sign_once(d.f, C.ds_ulong(sh), C.ds_ulong(mech), bytesPtr(param), C.ds_ulong(len(param)),
		C.ds_ulong(key), dataPtr(data), C.ds_ulong(len(data)), (*C.uchar)(unsafe.Pointer(&sig[0])), &n, &failed)
	calls = 2
	if failed == 1 {
		calls = 1
	}
	if rv == C.ds_ulong(p11.CKR_BUFFER_TOO_SMALL) && failed == 2 && n > C.ds_ulong(sigLen) && n <= maxSigLen {
		sig = make([]byte, int(n))
		calls++
		rv = C.ds_sign_more(d.f, C.ds_ulong(sh), dataPtr(data), C.ds_ulong(len(data)), (*C.uchar)(unsafe.Pointer(&sig[0])), &n)
	}
	runtime.KeepAlive(param)
	runtime.KeepAlive(data)
	if rv != 0 {
		op := "C_Sign"
		if failed == 1 {
			op = "C_SignInit"
		}
		return nil, calls, &Error{Op: op, Code: uint(rv)}
	}
	if n > C.ds_ulong(len(sig)) {
		return nil, calls, &Error{Op: "C_Sign", Code: p11.CKR_GENERAL_ERROR}
	}
	return sig[:n], calls, nil
}

// bytesPtr is b's first byte, or nil for an empty b.
func bytesPtr(b []byte) unsafe.Pointer {
	if len(b) == 0 {
		return nil
	}
	return unsafe.Pointer(&b[0])
}

// empty stands in for an empty message: modules refuse a NULL pData with
// CKR_ARGUMENTS_BAD even when its length is 0 (SoftHSM2 does).
var empty [1]byte

// dataPtr is data's first byte, or a valid pointer for an empty data.
func dataPtr(data []byte) *C.uchar {
	if len(data) == 0 {
		return (*C.uchar)(unsafe.Pointer(&empty[0]))
	}
	return (*C.uchar)(unsafe.Pointer(&data[0]))
}
