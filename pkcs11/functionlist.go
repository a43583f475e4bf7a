//go:build cgo && unix

package pkcs11

/*
#cgo linux LDFLAGS: -ldl
#include <dlfcn.h>
#include <stdlib.h>

// The PKCS#11 types this file needs, as the standard's pkcs11t.h defines
// them on Unix (CK_ULONG is unsigned long, structures unpacked).
typedef unsigned long sk_rv;
typedef struct {
	sk_rv mechanism;
	void *parameter;
	sk_rv parameter_len;
} sk_mechanism;
typedef sk_rv (*sk_initialize_fn)(void *args);
typedef sk_rv (*sk_sign_init_fn)(sk_rv session, sk_mechanism *mech, sk_rv key);
typedef sk_rv (*sk_sign_fn)(sk_rv session, unsigned char *data, sk_rv data_len, unsigned char *sig, sk_rv *sig_len);

// CK_FUNCTION_LIST: CK_VERSION, then the functions in the standard's
// order, of which C_Initialize is the 1st and C_SignInit and C_Sign the
// 43rd and 44th. Lists of Cryptoki 2.x and later share this layout (3.0
// modules return the 2.x-compatible CK_FUNCTION_LIST from
// C_GetFunctionList).
typedef struct {
	unsigned char major, minor;
	void *fn[44];
} sk_function_list;
#define SK_INITIALIZE 0
#define SK_SIGN_INIT 42
#define SK_SIGN 43

#define SK_CKR_OK 0x0UL
#define SK_CKR_HOST_MEMORY 0x2UL
#define SK_CKR_GENERAL_ERROR 0x5UL
#define SK_CKR_MUTEX_BAD 0x1A0UL
#define SK_CKR_MUTEX_NOT_LOCKED 0x1A1UL
#define SK_CKF_OS_LOCKING_OK 0x2UL

// sk_lookup returns the function list of the module loaded from path
// (dlopen with RTLD_NOLOAD finds what miekg/pkcs11 opened), or NULL. The
// list is the module's own memory, valid while the module stays loaded.
static sk_function_list *sk_lookup(const char *path) {
	void *h = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
	if (h == NULL) {
		return NULL;
	}
	sk_rv (*get)(sk_function_list **) = (sk_rv (*)(sk_function_list **))dlsym(h, "C_GetFunctionList");
	sk_function_list *fl = NULL;
	if (get == NULL || get(&fl) != SK_CKR_OK || fl == NULL || fl->major < 2 ||
			fl->fn[SK_INITIALIZE] == NULL || fl->fn[SK_SIGN_INIT] == NULL || fl->fn[SK_SIGN] == NULL) {
		fl = NULL;
	}
	dlclose(h); // miekg/pkcs11 still holds the library
	return fl;
}

// sk_sign_once is C_SignInit then C_Sign into sig, whose capacity is
// *sig_len, in one call from Go. failed says which call returned the
// error: 1 for C_SignInit, 2 for C_Sign. On CKR_BUFFER_TOO_SMALL the
// operation is still active and *sig_len is the length needed.
static sk_rv sk_sign_once(sk_function_list *fl, sk_rv session, sk_rv mech, void *param, sk_rv param_len,
		sk_rv key, unsigned char *data, sk_rv data_len, unsigned char *sig, sk_rv *sig_len, int *failed) {
	sk_mechanism m = {mech, param, param_len};
	sk_rv rv = ((sk_sign_init_fn)fl->fn[SK_SIGN_INIT])(session, &m, key);
	if (rv != SK_CKR_OK) {
		*failed = 1;
		return rv;
	}
	rv = ((sk_sign_fn)fl->fn[SK_SIGN])(session, data, data_len, sig, sig_len);
	if (rv != SK_CKR_OK) {
		*failed = 2;
	}
	return rv;
}

static sk_rv sk_sign_more(sk_function_list *fl, sk_rv session, unsigned char *data, sk_rv data_len, unsigned char *sig, sk_rv *sig_len) {
	return ((sk_sign_fn)fl->fn[SK_SIGN])(session, data, data_len, sig, sig_len);
}

#ifdef __linux__
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <unistd.h>

#define SK_SPIN_SUPPORTED 1

// A futex mutex after Drepper, "Futexes Are Tricky" (mutex3): state 0 is
// unlocked, 1 locked, 2 locked with sleepers. A locker first spins, which is
// what pays on the short, hot critical sections of software tokens; only
// then does it sleep in the kernel, so a long hold (a real HSM's module
// waiting on its device) costs a waiter no more than the spin. One cache
// line each, so two mutexes never share one.
//
// 500 rounds of PAUSE are 10–25 µs on current x86 cores. On SoftHSM2 with
// two threads, 100, 500, 2000 and 20000 rounds all scaled the same within
// noise (C, pthreads, 30 alternations each), so the spin is kept short.
#define SK_SPINS 500
typedef struct {
	_Atomic int state;
	char pad[64 - sizeof(int)];
} sk_mutex;

// How many mutexes modules have created and destroyed through these
// callbacks, for tests: a module that took them creates some in
// C_Initialize. Counted only there, never on the lock path.
static _Atomic long sk_created, sk_destroyed;

static inline void sk_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield");
#endif
}

static sk_rv sk_create(void **out) {
	if (out == NULL) {
		return SK_CKR_MUTEX_BAD;
	}
	sk_mutex *m = aligned_alloc(64, sizeof(sk_mutex));
	if (m == NULL) {
		return SK_CKR_HOST_MEMORY;
	}
	atomic_init(&m->state, 0);
	*out = m;
	atomic_fetch_add_explicit(&sk_created, 1, memory_order_relaxed);
	return SK_CKR_OK;
}

static sk_rv sk_destroy(void *p) {
	if (p == NULL) {
		return SK_CKR_MUTEX_BAD;
	}
	free(p);
	atomic_fetch_add_explicit(&sk_destroyed, 1, memory_order_relaxed);
	return SK_CKR_OK;
}

static void sk_mutex_counts(long *created, long *destroyed) {
	*created = atomic_load(&sk_created);
	*destroyed = atomic_load(&sk_destroyed);
}

static sk_rv sk_lock(void *p) {
	sk_mutex *m = p;
	if (m == NULL) {
		return SK_CKR_MUTEX_BAD;
	}
	for (int i = 0; i < SK_SPINS; i++) {
		int c = atomic_load_explicit(&m->state, memory_order_relaxed);
		if (c == 0 && atomic_compare_exchange_weak_explicit(&m->state, &c, 1,
				memory_order_acquire, memory_order_relaxed)) {
			return SK_CKR_OK;
		}
		sk_relax();
	}
	int c = atomic_exchange_explicit(&m->state, 2, memory_order_acquire);
	while (c != 0) {
		long r = syscall(SYS_futex, &m->state, FUTEX_WAIT_PRIVATE, 2, NULL, NULL, 0);
		if (r != 0 && errno != EAGAIN && errno != EINTR) {
			return SK_CKR_GENERAL_ERROR;
		}
		c = atomic_exchange_explicit(&m->state, 2, memory_order_acquire);
	}
	return SK_CKR_OK;
}

static sk_rv sk_unlock(void *p) {
	sk_mutex *m = p;
	if (m == NULL) {
		return SK_CKR_MUTEX_BAD;
	}
	int c = atomic_exchange_explicit(&m->state, 0, memory_order_release);
	if (c == 0) {
		return SK_CKR_MUTEX_NOT_LOCKED;
	}
	if (c == 2) {
		syscall(SYS_futex, &m->state, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
	}
	return SK_CKR_OK;
}

typedef struct {
	sk_rv (*create)(void **);
	sk_rv (*destroy)(void *);
	sk_rv (*lock)(void *);
	sk_rv (*unlock)(void *);
	unsigned long flags;
	void *reserved;
} sk_initialize_args;

// sk_initialize calls the module's C_Initialize with the mutexes above
// (CKF_OS_LOCKING_OK set too, so the module may choose).
static sk_rv sk_initialize(sk_function_list *fl) {
	sk_initialize_args args = {sk_create, sk_destroy, sk_lock, sk_unlock, SK_CKF_OS_LOCKING_OK, NULL};
	return ((sk_initialize_fn)fl->fn[SK_INITIALIZE])(&args);
}

// sk_mutex_test runs the callbacks as a module would, for tests: n threads
// each add 1 to a counter iters times under one mutex.
typedef struct { void *m; long iters; long *counter; sk_rv rv; } sk_worker;
static void *sk_work(void *p) {
	sk_worker *w = p;
	for (long i = 0; i < w->iters; i++) {
		sk_rv rv = sk_lock(w->m);
		if (rv == SK_CKR_OK) {
			long v = *w->counter;
			*w->counter = v + 1;
			rv = sk_unlock(w->m);
		}
		if (rv != SK_CKR_OK) {
			w->rv = rv;
			return NULL;
		}
	}
	return NULL;
}
static sk_rv sk_mutex_test(int n, long iters, long *counter) {
	void *m;
	sk_rv rv = sk_create(&m);
	if (rv != SK_CKR_OK) {
		return rv;
	}
	pthread_t th[16];
	sk_worker w[16];
	if (n > 16) {
		n = 16;
	}
	for (int i = 0; i < n; i++) {
		w[i] = (sk_worker){m, iters, counter, SK_CKR_OK};
		if (pthread_create(&th[i], NULL, sk_work, &w[i]) != 0) {
			n = i;
			rv = SK_CKR_GENERAL_ERROR;
			break;
		}
	}
	for (int i = 0; i < n; i++) {
		pthread_join(th[i], NULL);
		if (w[i].rv != SK_CKR_OK) {
			rv = w[i].rv;
		}
	}
	if (rv == SK_CKR_OK && sk_unlock(m) != SK_CKR_MUTEX_NOT_LOCKED) {
		rv = SK_CKR_GENERAL_ERROR;
	}
	sk_destroy(m);
	return rv;
}
#else
// The spinning mutexes are built on Linux futexes; elsewhere modules use
// their own (LockingOS).
#define SK_SPIN_SUPPORTED 0
static sk_rv sk_initialize(sk_function_list *fl) { return SK_CKR_GENERAL_ERROR; }
static void sk_mutex_counts(long *created, long *destroyed) { *created = 0; *destroyed = 0; }
static sk_rv sk_mutex_test(int n, long iters, long *counter) { return SK_CKR_OK; }
#endif
*/
import "C"

import (
	"runtime"
	"unsafe"

	p11 "github.com/miekg/pkcs11"
)

// spinLockingSupported says whether LockingSpin is available here.
const spinLockingSupported = C.SK_SPIN_SUPPORTED != 0

// functionList is a loaded module's CK_FUNCTION_LIST, read once when it is
// loaded: package pkcs11 calls C_Initialize (with LockingSpin), C_SignInit
// and C_Sign through it itself, and everything else through miekg/pkcs11.
type functionList struct {
	fl *C.sk_function_list // the module's memory, valid while it is loaded
}

// lookupFunctionList reads the function list of the module miekg/pkcs11
// loaded from path; nil when it cannot, and the module is used through
// miekg/pkcs11 alone.
func lookupFunctionList(path string) *functionList {
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	fl := C.sk_lookup(cpath)
	if fl == nil {
		return nil
	}
	return &functionList{fl: fl}
}

// initializeSpin calls C_Initialize, handing the module signerkit's
// mutexes. Only where spinLockingSupported.
func (f *functionList) initializeSpin() uint {
	return uint(C.sk_initialize(f.fl))
}

// maxSigLen bounds the length a module may ask for on
// CKR_BUFFER_TOO_SMALL (an RSA-16384 signature is 2048 bytes): a larger
// one is a broken module, and its error is returned rather than the
// buffer allocated.
const maxSigLen = 1 << 16

// sign runs C_SignInit(mech, param) on key and C_Sign on data in session
// sh, in one call from Go (miekg/pkcs11 makes three — C_SignInit, C_Sign
// for the length, C_Sign again — and builds the mechanism in C memory each
// time; every call into a software token takes its locks), expecting a signature of at most sigLen bytes (a longer one costs a
// second C_Sign). It returns the number of calls made into the module;
// the error is an *Error naming the call that failed.
func (f *functionList) sign(sh p11.SessionHandle, mech uint, param []byte, key p11.ObjectHandle, data []byte, sigLen int) (sig []byte, calls int64, err error) {
	if sigLen < 1 {
		sigLen = 1
	}
	sig = make([]byte, sigLen)
	n := C.sk_rv(sigLen)
	var failed C.int
	// Go memory passed for the call's duration only: none holds a Go
	// pointer, and the module must not keep them (PKCS#11 says so).
	rv := C.sk_sign_once(f.fl, C.sk_rv(sh), C.sk_rv(mech), bytesPtr(param), C.sk_rv(len(param)),
		C.sk_rv(key), dataPtr(data), C.sk_rv(len(data)), (*C.uchar)(unsafe.Pointer(&sig[0])), &n, &failed)
	calls = 2
	if failed == 1 {
		calls = 1
	}
	if rv == C.sk_rv(p11.CKR_BUFFER_TOO_SMALL) && failed == 2 && n > C.sk_rv(sigLen) && n <= maxSigLen {
		sig = make([]byte, int(n))
		calls++
		rv = C.sk_sign_more(f.fl, C.sk_rv(sh), dataPtr(data), C.sk_rv(len(data)), (*C.uchar)(unsafe.Pointer(&sig[0])), &n)
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
	if n > C.sk_rv(len(sig)) {
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

// mutexSelfTest runs threads C threads, each locking and unlocking one of
// signerkit's module mutexes iters times around an unguarded increment;
// it returns the count and the first CK_RV other than CKR_OK.
func mutexSelfTest(threads int, iters int64) (int64, uint) {
	var counter C.long
	rv := C.sk_mutex_test(C.int(threads), C.long(iters), &counter)
	return int64(counter), uint(rv)
}

// spinMutexCounts returns how many of signerkit's module mutexes have been
// created and destroyed in this process.
func spinMutexCounts() (created, destroyed int64) {
	var c, d C.long
	C.sk_mutex_counts(&c, &d)
	return int64(c), int64(d)
}
