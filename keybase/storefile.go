package keybase

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ed25519"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/signerkit/signerkit/internal/atomicfile"
	"github.com/signerkit/signerkit/internal/backoff"
	"github.com/signerkit/signerkit/internal/flock"
	"github.com/signerkit/signerkit/signer"
)

// keyFile is a key file as read.
type keyFile struct {
	name   string // the key's name: the file's name header, else its file name's
	alg    signer.Algorithm
	pub    crypto.PublicKey
	sealed *sealedKey
}

// maxFile bounds a key file's size: a key's file is under 2 KiB.
const maxFile = maxArmor

// read checks the directory, then reads and parses the key file of name,
// without decrypting.
func (s *Store) read(ctx context.Context, name string) (*keyFile, error) {
	if _, err := checkDir(s.dir); err != nil {
		return nil, err
	}
	return s.readKey(ctx, name)
}

// readKey reads and parses the key file of name, without decrypting, in
// the directory the caller checked. It opens the file without following a
// link or blocking, refuses anything but a regular file (*FileError), and
// returns when ctx is done even if the file system hangs.
func (s *Store) readKey(ctx context.Context, name string) (*keyFile, error) {
	if err := CheckName(name); err != nil {
		return nil, err
	}
	kf, err := s.readStem(ctx, fileStem(name))
	if errors.Is(err, signer.ErrKeyNotFound) {
		return nil, fmt.Errorf("keybase: key %q: %w", name, signer.ErrKeyNotFound)
	}
	if err != nil {
		return nil, named(name, err)
	}
	if kf.name != name {
		kf.sealed.wipe()
		return nil, named(name, fmt.Errorf("keybase: the file %s holds the key named %s: %w", quoted(fileStem(name)+keySuffix), quoted(kf.name), signer.ErrCorrupt))
	}
	return kf, nil
}

// readStem reads and parses the key file "<stem>.key", and finds its
// key's name: the file's name header, which must give this file name, or
// else the name the file name gives.
func (s *Store) readStem(ctx context.Context, stem string) (*keyFile, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("keybase: %w", err)
	}
	file := stem + keySuffix
	data, err := readFileContext(ctx, filepath.Join(s.dir, file))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("keybase: %s: %w", quoted(file), signer.ErrKeyNotFound)
	}
	if err != nil {
		var fe *FileError
		if errors.As(err, &fe) {
			return nil, err
		}
		return nil, fmt.Errorf("keybase: %w", err)
	}
	kf, err := parseKeyFile(data)
	clear(data) // an unencrypted key's file holds it in base64
	if err != nil {
		return nil, err
	}
	fromFile, hashed, ok := nameOfStem(stem)
	switch {
	case kf.name == "" && ok && !hashed:
		kf.name = fromFile
	case kf.name == "" || fileStem(kf.name) != stem:
		kf.sealed.wipe()
		return nil, armorErr(ArmorBadHeader, 0, "the name header does not give the file's name, "+quoted(file))
	}
	return kf, nil
}

// stemError says which key (or, for a long name's file, which file) an
// error of readStem is about.
func stemError(stem string, err error) error {
	if name, hashed, ok := nameOfStem(stem); ok && !hashed {
		return named(name, err)
	}
	return fmt.Errorf("keybase: %s: %w", quoted(stem+keySuffix), err)
}

// readFileContext reads a key file of at most maxFile bytes (more is
// read as maxFile+1, for the parser to refuse), returning when ctx is done
// even if the open or the read is stuck in the kernel (a hung network
// file system): the read then finishes, and its bytes are wiped, in the
// background.
func readFileContext(ctx context.Context, path string) ([]byte, error) {
	if ctx.Done() == nil {
		return readFile(path)
	}
	type result struct {
		data []byte
		err  error
	}
	ch := make(chan result, 1)
	go func() {
		data, err := readFile(path)
		ch <- result{data, err}
	}()
	select {
	case r := <-ch:
		return r.data, r.err
	case <-ctx.Done():
		go func() { clear((<-ch).data) }()
		return nil, fmt.Errorf("reading %s: %w", filepath.Base(path), ctx.Err())
	}
}

// testHookRead, set only by tests, runs in readFile between the open and
// the read, to stand for a read that hangs.
var testHookRead func()

func readFile(path string) ([]byte, error) {
	f, err := openFile(path, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if testHookRead != nil {
		testHookRead()
	}
	data, err := io.ReadAll(io.LimitReader(f, maxFile+1))
	if err != nil {
		clear(data)
		return nil, err
	}
	return data, nil
}

// parseKeyFile reads a public key block followed by a private key block.
func parseKeyFile(data []byte) (*keyFile, error) {
	l := &lines{data: data}
	pb, err := decodeBlock(l)
	if err != nil {
		return nil, err
	}
	if pb.Type != blockPublic {
		return nil, armorErr(ArmorBlockType, pb.line, quoted(pb.Type)+", want "+blockPublic)
	}
	var name string
	for _, h := range pb.Headers {
		switch h.Key {
		case "type", "version":
		case nameHeader:
			n, ok := unescapeName(h.Value)
			if !ok || CheckName(n) != nil || plainName(n) {
				return nil, armorErr(ArmorBadHeader, pb.line, "name: not a key name written as KeyFileName escapes it")
			}
			name = n
		default:
			return nil, armorErr(ArmorUnknownHeader, pb.line, quoted(h.Key))
		}
	}
	if v, _ := pb.header("version"); v != "0.0.0" {
		return nil, armorErr(ArmorBadHeader, pb.line, "version "+quoted(v)+`, want "0.0.0"`)
	}
	alg, pub, err := decodePublic(pb.Data)
	if err != nil {
		return nil, err
	}
	if err := checkPublic(pub); err != nil {
		return nil, err
	}
	kb, err := decodeBlock(l)
	if err != nil {
		return nil, err
	}
	sealed, err := parseSealedEnd(l, kb)
	if err != nil {
		return nil, err
	}
	return &keyFile{name: name, alg: alg, pub: pub, sealed: sealed}, nil
}

// nameHeader is the public key block's header that carries the key's
// name, escaped as KeyFileName escapes it, in the file of a name that is
// not its own file name.
const nameHeader = "name"

// checkPublic refuses an Ed25519 public key that is of small order or not
// canonically encoded (crypto/ed25519 verifies without the cofactor, so
// one constant signature would "verify" for every message under such a
// key), with an error wrapping signer.ErrInvalidKey.
func checkPublic(pub crypto.PublicKey) error {
	if p, ok := pub.(ed25519.PublicKey); ok {
		if err := signer.CheckEd25519PublicKey(p); err != nil {
			return fmt.Errorf("keybase: the key's public key: %w", err)
		}
	}
	return nil
}

// keyFileBytes is the file for the key of name: its public key block (as
// gnokey armors public keys, with the name header when name is not its
// own file name), a blank line, the private key block, a newline.
func keyFileBytes(pub crypto.PublicKey, name string, private []byte) ([]byte, error) {
	pa, err := publicAmino(pub)
	if err != nil {
		return nil, err
	}
	headers := []header{{"type", "Info"}, {"version", "0.0.0"}}
	if !plainName(name) {
		headers = append(headers, header{nameHeader, escapeName(name)})
	}
	var out bytes.Buffer
	out.Write(encodeBlock(block{Type: blockPublic, Headers: headers, Data: pa}))
	out.WriteString("\n\n")
	out.Write(private)
	out.WriteString("\n")
	return out.Bytes(), nil
}

// lock takes the store's write lock: this Store's, then the lock file's
// (a regular file, not a link), waiting until ctx is done. It checks the
// directory first.
func (s *Store) lock(ctx context.Context) (unlock func(), err error) {
	select {
	case s.sema <- struct{}{}:
	case <-ctx.Done():
		return nil, fmt.Errorf("keybase: waiting for the store's lock: %w", ctx.Err())
	}
	if _, err := checkDir(s.dir); err != nil {
		<-s.sema
		return nil, err
	}
	f, err := openFile(filepath.Join(s.dir, lockName), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		<-s.sema
		var fe *FileError
		if errors.As(err, &fe) {
			return nil, err // it names the lock file
		}
		return nil, fmt.Errorf("keybase: lock file: %w", err)
	}
	wait := backoff.Backoff{Min: time.Millisecond, Max: 50 * time.Millisecond}
	for {
		err := flock.TryLock(f)
		if err == nil {
			break
		}
		if !errors.Is(err, flock.ErrLocked) {
			f.Close()
			<-s.sema
			return nil, fmt.Errorf("keybase: lock file: %w", err)
		}
		if !wait.Sleep(ctx) {
			f.Close()
			<-s.sema
			return nil, fmt.Errorf("keybase: waiting for another process's lock on the store: %w", ctx.Err())
		}
	}
	return func() {
		flock.Unlock(f)
		f.Close()
		<-s.sema
	}, nil
}

// testHookChecked, set only by tests, runs in rename between the check of
// the name and the rename, to widen the window the lock must guard.
var testHookChecked func()

// writeTemp writes data to a new temporary file of name's in the
// directory, ".<stem>.tmp-<random hex>", mode 0600, and syncs it
// (atomicfile.CreateTemp).
func (s *Store) writeTemp(name string, data []byte) (*atomicfile.Temp, error) {
	tempName := func(_, random string) string {
		return filepath.Join(s.dir, "."+fileStem(name)+".tmp-"+random)
	}
	t, err := atomicfile.CreateTemp(s.path(name), data, atomicfile.Options{TempName: tempName})
	if err != nil {
		return nil, fmt.Errorf("keybase: writing key %q: %w", name, err)
	}
	return t, nil
}

// staleTemp is the age past which a temporary file of a key is taken to
// be left over by a writer that crashed between writing and renaming it:
// a live writer renames its file within seconds.
const staleTemp = time.Hour

// removeTemps removes name's temporary files older than age (all of them
// for 0). Each holds a copy of the key as it was then (encrypted, as the
// key's file is), which must not outlive the key. The caller holds the
// lock, under which writers write their temporary files (on systems
// without flock(2), only this Store's writers are held off).
func (s *Store) removeTemps(name string, age time.Duration) {
	atomicfile.RemoveTemps(s.dir, func(e fs.DirEntry) bool {
		// writeTemp puts hex digits (decimal ones in earlier versions)
		// after the prefix; anything else after it is another key's
		// temporary file (a key named "<name>.tmp-x" has
		// ".<name>.tmp-x.tmp-123").
		random, ok := strings.CutPrefix(e.Name(), "."+fileStem(name)+".tmp-")
		return ok && allHex(random) && e.Type().IsRegular()
	}, age)
}

func allHex(s string) bool {
	for _, c := range []byte(s) {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return s != ""
}

// put writes data as the file of name: a new key (replace false, failing
// with signer.ErrKeyExists if the name is taken) or the replacement of one
// (replace true). The file is written and synced under another name, then
// renamed into place under the lock, so readers see the old file or the
// new one, whole. The first write creates the directory.
func (s *Store) put(ctx context.Context, name string, data []byte, replace bool) error {
	if err := s.ensureDir(); err != nil {
		return err
	}
	unlock, err := s.lock(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	// The temporary file is written under the lock, so that DeleteKey,
	// which holds it, can remove every temporary file of a key: none is a
	// live writer's.
	tmp, err := s.writeTemp(name, data)
	if err != nil {
		return err
	}
	defer tmp.Remove() // after a successful rename there is nothing to remove
	return s.rename(tmp, name, replace)
}

// rename moves tmp into place as name's file; the caller holds the lock.
func (s *Store) rename(tmp *atomicfile.Temp, name string, replace bool) error {
	_, err := os.Lstat(s.path(name))
	switch {
	case err == nil && !replace:
		return fmt.Errorf("keybase: key %q: %w", name, signer.ErrKeyExists)
	case errors.Is(err, fs.ErrNotExist) && replace:
		return fmt.Errorf("keybase: key %q: %w", name, signer.ErrKeyNotFound)
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("keybase: %w", err)
	}
	if testHookChecked != nil {
		testHookChecked()
	}
	if err := tmp.Rename(); err != nil {
		return fmt.Errorf("keybase: %w", err)
	}
	s.removeTemps(name, staleTemp)
	if err := atomicfile.SyncDir(s.dir); err != nil {
		return fmt.Errorf("keybase: key %q written, but syncing the directory failed: %w", name, err)
	}
	return nil
}
