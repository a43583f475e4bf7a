//go:build cgo && !unix

package pkcs11

import p11 "github.com/miekg/pkcs11"

// Elsewhere than on Unix the module's function list is not read: modules
// are used through miekg/pkcs11 alone, with their own mutexes.
const spinLockingSupported = false

type functionList struct{}

func lookupFunctionList(string) *functionList { return nil }

func (f *functionList) initializeSpin() uint { panic("pkcs11: no function list in this build") }

func (f *functionList) sign(p11.SessionHandle, uint, []byte, p11.ObjectHandle, []byte, int) ([]byte, int64, error) {
	panic("pkcs11: no function list in this build")
}

func mutexSelfTest(int, int64) (int64, uint) { return 0, 0 }

func spinMutexCounts() (int64, int64) { return 0, 0 }
