/*
 * How P-256 signing on SoftHSM2 scales from one thread to two, with no Go
 * involved: two sessions, one key, C threads calling C_SignInit + C_Sign.
 * Each round times a burst from one thread, then a burst from each of two
 * threads at once; the ratio is 2 x time(one) / time(two) over all rounds
 * (2 is perfect scaling). It runs the module with its own mutexes
 * (CKF_OS_LOCKING_OK) or with spinning mutexes handed to C_Initialize (the
 * scheme package pkcs11's LockingSpin uses), and, with -DWITH_OPENSSL, what
 * OpenSSL alone does per SoftHSM2 sign (an EC_KEY from the scalar, then
 * ECDSA_do_sign) as the ceiling.
 *
 * usage: probe MODULE PIN os|spin|openssl [ROUNDS] [BURST]
 * (SOFTHSM2_CONF must point at a token with user PIN PIN; see run.sh.)
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#ifdef WITH_OPENSSL
#include <openssl/ec.h>
#include <openssl/obj_mac.h>
#endif

/* The PKCS#11 types used here, as pkcs11t.h defines them on Linux. */
typedef unsigned long ul;
typedef struct { ul type; void *value; ul len; } attr;
typedef struct { ul mech; void *param; ul len; } mechanism;
typedef struct {
	ul (*create)(void **);
	ul (*destroy)(void *);
	ul (*lock)(void *);
	ul (*unlock)(void *);
	ul flags;
	void *reserved;
} init_args;
enum { F_INITIALIZE = 0, F_GET_SLOT_LIST = 4, F_OPEN_SESSION = 12, F_LOGIN = 18, F_GENERATE_KEY_PAIR = 59, F_SIGN_INIT = 42, F_SIGN = 43 };
typedef struct { unsigned char major, minor; void *fn[68]; } function_list;
static function_list *fl;
#define CALL(i, T) ((T)fl->fn[i])

/* Spin, then sleep on a futex (Drepper's mutex3). */
typedef struct { _Atomic int s; char pad[60]; } mtx;
static ul m_create(void **out) { mtx *m = aligned_alloc(64, sizeof *m); if (!m) return 2; atomic_init(&m->s, 0); *out = m; return 0; }
static ul m_destroy(void *m) { free(m); return 0; }
static ul m_lock(void *p) {
	mtx *m = p;
	for (int i = 0; i < 500; i++) {
		int c = 0;
		if (atomic_load_explicit(&m->s, memory_order_relaxed) == 0 &&
		    atomic_compare_exchange_weak_explicit(&m->s, &c, 1, memory_order_acquire, memory_order_relaxed))
			return 0;
		__builtin_ia32_pause();
	}
	int c = atomic_exchange_explicit(&m->s, 2, memory_order_acquire);
	while (c != 0) {
		syscall(SYS_futex, &m->s, FUTEX_WAIT_PRIVATE, 2, NULL, NULL, 0);
		c = atomic_exchange_explicit(&m->s, 2, memory_order_acquire);
	}
	return 0;
}
static ul m_unlock(void *p) {
	mtx *m = p;
	if (atomic_exchange_explicit(&m->s, 0, memory_order_release) == 2)
		syscall(SYS_futex, &m->s, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
	return 0;
}

static void die(const char *what, ul rv) { fprintf(stderr, "probe: %s: CK_RV %#lx\n", what, rv); exit(1); }
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec / 1e9; }

static int burst = 16;
static const char *mode;
typedef struct { ul session, key; } worker;
#ifdef WITH_OPENSSL
static EC_KEY *ossl_key;
#endif

static void *sign_burst(void *p) {
	worker *w = p;
	unsigned char digest[32] = {1}, sig[128];
	for (int i = 0; i < burst; i++) {
#ifdef WITH_OPENSSL
		if (strcmp(mode, "openssl") == 0) {
			EC_KEY *k = EC_KEY_new();
			EC_GROUP *g = EC_GROUP_new_by_curve_name(NID_X9_62_prime256v1);
			BIGNUM *d = BN_dup(EC_KEY_get0_private_key(ossl_key));
			EC_KEY_set_group(k, g);
			EC_KEY_set_private_key(k, d);
			ECDSA_SIG_free(ECDSA_do_sign(digest, 32, k));
			BN_clear_free(d);
			EC_GROUP_free(g);
			EC_KEY_free(k);
			continue;
		}
#endif
		mechanism m = {0x1041 /* CKM_ECDSA */, NULL, 0};
		ul rv = CALL(F_SIGN_INIT, ul (*)(ul, mechanism *, ul))(w->session, &m, w->key);
		if (rv) die("C_SignInit", rv);
		ul len = sizeof sig;
		rv = CALL(F_SIGN, ul (*)(ul, unsigned char *, ul, unsigned char *, ul *))(w->session, digest, 32, sig, &len);
		if (rv) die("C_Sign", rv);
	}
	return NULL;
}

int main(int argc, char **argv) {
	if (argc < 4) { fprintf(stderr, "usage: probe MODULE PIN os|spin|openssl [ROUNDS] [BURST]\n"); return 2; }
	mode = argv[3];
	int rounds = argc > 4 ? atoi(argv[4]) : 200;
	if (argc > 5) burst = atoi(argv[5]);
	worker w[2];
	if (strcmp(mode, "openssl") == 0) {
#ifdef WITH_OPENSSL
		ossl_key = EC_KEY_new_by_curve_name(NID_X9_62_prime256v1);
		EC_KEY_generate_key(ossl_key);
#else
		fprintf(stderr, "probe: built without OpenSSL\n");
		return 2;
#endif
	} else {
		void *h = dlopen(argv[1], RTLD_NOW);
		if (!h) { fprintf(stderr, "probe: %s\n", dlerror()); return 1; }
		ul (*get)(function_list **) = (ul (*)(function_list **))dlsym(h, "C_GetFunctionList");
		if (!get || get(&fl)) { fprintf(stderr, "probe: no C_GetFunctionList\n"); return 1; }
		init_args a = {0};
		a.flags = 2; /* CKF_OS_LOCKING_OK */
		if (strcmp(mode, "spin") == 0) { a.create = m_create; a.destroy = m_destroy; a.lock = m_lock; a.unlock = m_unlock; }
		ul rv = CALL(F_INITIALIZE, ul (*)(init_args *))(&a);
		if (rv) die("C_Initialize", rv);
		ul slots[8], n = 8;
		if ((rv = CALL(F_GET_SLOT_LIST, ul (*)(unsigned char, ul *, ul *))(1, slots, &n)) || n == 0) die("C_GetSlotList", rv);
		for (int i = 0; i < 2; i++)
			if ((rv = CALL(F_OPEN_SESSION, ul (*)(ul, ul, void *, void *, ul *))(slots[0], 4 | 2 /* serial, rw */, NULL, NULL, &w[i].session))) die("C_OpenSession", rv);
		if ((rv = CALL(F_LOGIN, ul (*)(ul, ul, unsigned char *, ul))(w[0].session, 1, (unsigned char *)argv[2], strlen(argv[2])))) die("C_Login", rv);
		unsigned char yes = 1, p256[] = {0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07};
		attr pub[] = {{0x1 /* CKA_TOKEN */, &yes, 1}, {0x180 /* CKA_EC_PARAMS */, p256, sizeof p256}, {0x10A /* CKA_VERIFY */, &yes, 1}};
		attr priv[] = {{0x1, &yes, 1}, {0x2 /* CKA_PRIVATE */, &yes, 1}, {0x103 /* CKA_SENSITIVE */, &yes, 1}, {0x108 /* CKA_SIGN */, &yes, 1}};
		mechanism gen = {0x1040 /* CKM_EC_KEY_PAIR_GEN */, NULL, 0};
		ul pk;
		if ((rv = CALL(F_GENERATE_KEY_PAIR, ul (*)(ul, mechanism *, attr *, ul, attr *, ul, ul *, ul *))(w[0].session, &gen, pub, 3, priv, 4, &pk, &w[0].key))) die("C_GenerateKeyPair", rv);
		w[1].key = w[0].key;
	}
	sign_burst(&w[0]); /* warm up */
	double one = 0, two = 0;
	for (int r = 0; r < rounds; r++) {
		double t = now();
		sign_burst(&w[0]);
		one += now() - t;
		pthread_t th[2];
		t = now();
		for (int i = 0; i < 2; i++) pthread_create(&th[i], NULL, sign_burst, &w[i]);
		for (int i = 0; i < 2; i++) pthread_join(th[i], NULL);
		two += now() - t;
	}
	printf("%-8s one thread %6.1f us/sign  two threads %6.1f us/sign  throughput-2v1 %.3f\n", mode,
	       one / (rounds * burst) * 1e6, two / (2.0 * rounds * burst) * 1e6, 2 * one / two);
	return 0;
}
