package guard

import "github.com/signerkit/signerkit/internal/statefile"

// FS is where the guard keeps its state files. DirFS, a directory on the
// operating system's file system, is the one to use; tests plug in their
// own to inject write and sync failures.
//
// Open opens the named state file for reading and writing; when there is
// no such file the error satisfies errors.Is(err, fs.ErrNotExist). Create
// makes the named file with contents data, durably: once it returns nil
// the file and its name survive a power loss. It fails, with an error
// satisfying errors.Is(err, fs.ErrExist), if the file already exists.
//
// It is the same type as frost.FS, so one FS serves both.
type FS = statefile.FS

// File is an open state file. The guard writes it in place with WriteAt
// and makes each write durable with Sync (fdatasync(2) where the system
// has it, else fsync(2)) before a signature is released.
type File = statefile.File

// MemFS is an FS in memory, for tests and benchmarks: nothing it holds
// survives the process, and its Sync does nothing, so a Guard on it is
// not durable. The zero value is an empty FS. It is safe for concurrent
// use.
type MemFS = statefile.MemFS

// DirFS returns the FS of the directory dir, which must exist.
//
// Open takes an exclusive advisory lock (flock(2)) on the file where the
// system has one, so two processes cannot sign from the same state: the
// second gets an error. Create writes a temporary file (a fresh name, mode
// 0600), syncs it, links it into place (a rename where the file system has
// no hard links) and syncs the directory, so a new state file is never
// seen half written and its name is not lost to a power cut. Sync is
// fdatasync(2) on Linux and fsync(2) elsewhere (F_FULLFSYNC on macOS, as
// os.File.Sync does there).
func DirFS(dir string) FS { return statefile.Dir(dir) }
