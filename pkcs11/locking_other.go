//go:build cgo && !linux

package pkcs11

// spinLockingSupported says whether LockingSpin is available here: the
// spinning mutexes are built on Linux futexes, so elsewhere modules use
// their own (LockingOS).
const spinLockingSupported = false

func initializeSpin(string) (uint, bool) { return 0, false }

func mutexSelfTest(int, int64) (int64, uint) { return 0, 0 }

func spinMutexCounts() (int64, int64) { return 0, 0 }
