//go:build cgo && linux

package pkcs11_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"runtime"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/signerkit/signerkit/pkcs11"
	"github.com/signerkit/signerkit/pkcs11/pkcs11test"
	"github.com/signerkit/signerkit/signer"
	"github.com/signerkit/signerkit/signer/signertest"
)

// BenchmarkOverhead measures what this package adds to a PKCS#11 sign: each
// iteration signs the same 256 bytes with the same SoftHSM2 Ed25519 key
// once through a Signer and once through a bare miekg/pkcs11 session
// (C_SignInit + C_Sign), in alternating order, so both see the same load
// on a shared machine. It reports, per sign of each, the wall time
// (ours-ns/op, raw-ns/op) and the CPU time of the signing thread
// (ours-cpu-ns/op, raw-cpu-ns/op), and their ratios ours/raw and
// ours/raw-cpu; ns/op is the pair.
func BenchmarkOverhead(b *testing.B) {
	st := pkcs11test.New(b)
	_, priv, _ := ed25519.GenerateKey(rand.Reader)
	if err := st.ImportPKCS8(priv, "overhead", []byte{1}); err != nil {
		b.Fatal(err)
	}
	cfg := st.Config()
	cfg.Key.Label = "overhead"
	k, err := pkcs11.Open(context.Background(), cfg)
	if err != nil {
		b.Fatal(err)
	}
	defer k.Close()
	raw, err := st.OpenRaw("overhead") // shares the module k loaded
	if err != nil {
		b.Fatal(err)
	}
	defer raw.Close()
	msg := make([]byte, 256)
	ours := func() ([]byte, error) { return k.SignContext(context.Background(), msg) }
	bare := func() ([]byte, error) { return raw.Sign(msg) }
	for _, f := range []func() ([]byte, error){ours, bare} {
		if _, err := f(); err != nil {
			b.Fatal(err)
		}
	}
	// The thread's CPU clock counts the module's work too: cgo calls run on
	// the calling goroutine's thread.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var wall, cpu [2]time.Duration
	var sigs [2][]byte
	fs := [2]func() ([]byte, error){ours, bare}
	i := 0
	for b.Loop() {
		for j := range 2 {
			which := (i + j) % 2
			w0, c0 := time.Now(), threadCPU()
			sig, err := fs[which]()
			cpu[which] += threadCPU() - c0
			wall[which] += time.Since(w0)
			if err != nil {
				b.Fatal(err)
			}
			sigs[which] = sig
		}
		i++
	}
	for _, sig := range sigs {
		if err := signertest.VerifyStd(signer.Ed25519, priv.Public(), msg, sig); err != nil {
			b.Fatal(err)
		}
	}
	n := float64(b.N)
	b.ReportMetric(float64(wall[0])/n, "ours-ns/op")
	b.ReportMetric(float64(wall[1])/n, "raw-ns/op")
	b.ReportMetric(float64(cpu[0])/n, "ours-cpu-ns/op")
	b.ReportMetric(float64(cpu[1])/n, "raw-cpu-ns/op")
	b.ReportMetric(float64(wall[0])/float64(wall[1]), "ours/raw")
	b.ReportMetric(float64(cpu[0])/float64(cpu[1]), "ours/raw-cpu")
}

// threadCPU returns the CPU time of the calling thread
// (CLOCK_THREAD_CPUTIME_ID).
func threadCPU() time.Duration {
	var ts syscall.Timespec
	const clockThreadCPUTimeID = 3
	syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockThreadCPUTimeID, uintptr(unsafe.Pointer(&ts)), 0)
	return time.Duration(ts.Nano())
}
