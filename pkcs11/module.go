//go:build cgo

package pkcs11

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	p11 "github.com/miekg/pkcs11"

	"github.com/signerkit/signerkit/signer"
)

// module is a loaded PKCS#11 library. One is loaded per file, whatever
// path reaches it (a distribution's compatibility symlink and the file it
// links to are one module: the dynamic loader loads the file once, so one
// C_Finalize ends it for both), and shared by every token opened through
// it; the last user to release it finalizes and unloads it.
type module struct {
	path    string // the path it was first loaded through, for messages
	key     string // its key in modules: the file's identity (moduleKey)
	ctx     *p11.Ctx
	refs    int     // guarded by modulesMu
	owns    bool    // we called C_Initialize, so we call C_Finalize
	locking Locking // the mutexes it was initialized with, when owns
	// funcs is the module's function list, for the calls made without
	// miekg/pkcs11 (C_Initialize with our mutexes, C_SignInit + C_Sign);
	// nil when it could not be read.
	funcs *functionList
}

var (
	modulesMu sync.Mutex
	modules   = map[string]*module{}
)

// loadModule returns the module at path, loading and initializing it if no
// one holds it. The caller releases it with releaseModule.
func loadModule(path string, locking Locking) (*module, error) {
	if path == "" {
		return nil, fmt.Errorf("pkcs11: no module path (Config.Module or module-path): %w", signer.ErrInvalidArgument)
	}
	if locking != LockingSpin && locking != LockingOS {
		return nil, fmt.Errorf("pkcs11: Config.Locking %v, want LockingSpin or LockingOS: %w", locking, signer.ErrInvalidArgument)
	}
	key, shown, err := moduleKey(path)
	if err != nil {
		return nil, err
	}
	modulesMu.Lock()
	defer modulesMu.Unlock()
	if m := modules[key]; m != nil {
		m.refs++
		return m, nil
	}
	ctx := p11.New(path)
	if ctx == nil {
		return nil, fmt.Errorf("pkcs11: module %s could not be loaded (not a PKCS#11 library, or missing dependencies): %w", path, signer.ErrDeviceNotFound)
	}
	m := &module{path: shown, key: key, ctx: ctx, refs: 1, owns: true, locking: LockingOS, funcs: lookupFunctionList(path)}
	if err := m.initialize(locking); err != nil {
		if code, ok := ckr(err); ok && code == p11.CKR_CRYPTOKI_ALREADY_INITIALIZED {
			// Someone else in this process (another library, or a raw
			// miekg/pkcs11 handle) initialized it; leave finalizing to them.
			m.owns = false
		} else {
			ctx.Destroy()
			return nil, err
		}
	}
	modules[key] = m
	return m, nil
}

// moduleKey returns the key of the module at path in modules, and the
// path to show for it. A path with a directory is keyed by the identity of
// the file it reaches (device and inode on Unix, the path with its links
// resolved elsewhere), so that two paths to one file share one module; a
// bare file name, which the dynamic loader looks up in its own search
// path, by the name.
func moduleKey(path string) (key, shown string, err error) {
	if !strings.ContainsRune(path, os.PathSeparator) {
		return "name:" + path, path, nil
	}
	shown = path
	if abs, err := filepath.Abs(path); err == nil {
		shown = abs
	}
	// miekg/pkcs11's New returns nil whatever dlopen said; say why.
	fi, err := os.Stat(path)
	if err != nil {
		return "", "", fmt.Errorf("pkcs11: module %s: %w (%v)", path, signer.ErrDeviceNotFound, err)
	}
	if id, ok := fileIdentity(path, fi); ok {
		return id, shown, nil
	}
	return "path:" + shown, shown, nil
}

// initialize calls C_Initialize with the mutexes locking asks for, falling
// back to the module's own when it refuses ours.
func (m *module) initialize(locking Locking) error {
	if locking == LockingSpin && spinLockingSupported && m.funcs != nil {
		switch rv := m.funcs.initializeSpin(); rv {
		case p11.CKR_OK:
			m.locking = LockingSpin
			return nil
		case p11.CKR_CANT_LOCK, p11.CKR_ARGUMENTS_BAD:
			// The module will not take our mutexes; use its own.
		default:
			return &Error{Op: "C_Initialize", Code: rv}
		}
	}
	return wrap("C_Initialize", m.ctx.Initialize())
}

// release drops one reference to m, finalizing and unloading it with the
// last one.
func (m *module) release() {
	modulesMu.Lock()
	defer modulesMu.Unlock()
	m.refs--
	if m.refs > 0 {
		return
	}
	delete(modules, m.key)
	if m.owns {
		m.ctx.Finalize()
	}
	m.ctx.Destroy()
}

// ckr returns the CK_RV inside err, if it came from the module.
func ckr(err error) (uint, bool) {
	var e p11.Error
	if errors.As(err, &e) {
		return uint(e), true
	}
	var ours *Error
	if errors.As(err, &ours) {
		return ours.Code, true
	}
	return 0, false
}

// wrap turns an error of miekg/pkcs11 into an *Error naming op.
func wrap(op string, err error) error {
	if err == nil {
		return nil
	}
	if code, ok := ckr(err); ok {
		return &Error{Op: op, Code: code}
	}
	return fmt.Errorf("pkcs11: %s: %w", op, err)
}
