//go:build cgo && linux

package pkcs11

/*
#cgo LDFLAGS: -ldl
#include <dlfcn.h>
#include <errno.h>
#include <linux/futex.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

// The PKCS#11 types this file needs, as the standard's pkcs11t.h defines
// them on Linux (CK_ULONG is unsigned long, structures unpacked).
typedef unsigned long sk_rv;
typedef sk_rv (*sk_createmutex)(void **);
typedef sk_rv (*sk_mutexop)(void *);
typedef struct {
	sk_createmutex create;
	sk_mutexop destroy, lock, unlock;
	unsigned long flags;
	void *reserved;
} sk_initialize_args;
// The head of CK_FUNCTION_LIST: CK_VERSION, then C_Initialize.
typedef struct {
	unsigned char major, minor;
	sk_rv (*initialize)(void *);
} sk_function_list_head;

#define SK_CKR_OK 0x0UL
#define SK_CKR_HOST_MEMORY 0x2UL
#define SK_CKR_GENERAL_ERROR 0x5UL
#define SK_CKR_MUTEX_BAD 0x1A0UL
#define SK_CKR_MUTEX_NOT_LOCKED 0x1A1UL
#define SK_CKF_OS_LOCKING_OK 0x2UL
#define SK_NOT_LOADED ((sk_rv)-1)

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

// sk_initialize calls C_Initialize of the module that miekg/pkcs11 loaded
// from path, giving it the mutexes above. It returns SK_NOT_LOADED when
// the module is not loaded (dlopen with RTLD_NOLOAD finds what New opened).
static sk_rv sk_initialize(const char *path) {
	void *h = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
	if (h == NULL) {
		return SK_NOT_LOADED;
	}
	sk_rv (*get)(sk_function_list_head **) = (sk_rv (*)(sk_function_list_head **))dlsym(h, "C_GetFunctionList");
	sk_function_list_head *fl = NULL;
	sk_rv rv = SK_NOT_LOADED;
	// A list that cannot be read is left to miekg/pkcs11 (which read it
	// once already), rather than its error taken for C_Initialize's.
	if (get != NULL && get(&fl) == SK_CKR_OK && fl != NULL && fl->initialize != NULL) {
		sk_initialize_args args = {sk_create, sk_destroy, sk_lock, sk_unlock, SK_CKF_OS_LOCKING_OK, NULL};
		rv = fl->initialize(&args);
	}
	dlclose(h);
	return rv;
}

// sk_mutex_test runs the callbacks as a module would, for tests: n threads
// each add 1 to a counter iters times under one mutex.
#include <pthread.h>
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
*/
import "C"

import "unsafe"

// spinLockingSupported says whether LockingSpin is available here.
const spinLockingSupported = true

// initializeSpin calls C_Initialize on the module miekg/pkcs11 loaded from
// path, handing it signerkit's mutexes. loaded is false when the module
// was not found loaded (nothing was called).
func initializeSpin(path string) (rv uint, loaded bool) {
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	r := C.sk_initialize(cpath)
	if r == C.SK_NOT_LOADED {
		return 0, false
	}
	return uint(r), true
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
