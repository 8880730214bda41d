//go:build unix

package sqlitejournal

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// lockOwnerFile returns path, locked (flock, exclusive) by this process,
// holding owner's name. The name appears only once the file is locked; a
// file of the same name that exists already is locked in place, unless
// another process holds it.
func lockOwnerFile(dir, path, owner string) (*os.File, error) {
	for range 100 {
		f, err := os.OpenFile(path, os.O_RDWR, 0)
		if err == nil {
			if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
				f.Close()
				if errors.Is(err, syscall.EWOULDBLOCK) {
					return nil, fmt.Errorf("%s is locked by another live process using the same owner name", path)
				}
				return nil, err
			}
			if same(f, path) {
				return f, nil
			}
			f.Close() // removed by a sweep before the lock: start again
			continue
		}
		if !os.IsNotExist(err) {
			return nil, err
		}
		tmp, err := os.CreateTemp(dir, "new-*.tmp")
		if err != nil {
			return nil, err
		}
		_ = tmp.Chmod(0o600)
		if err := syscall.Flock(int(tmp.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
			return nil, err
		}
		if _, err := tmp.WriteString(owner); err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
			return nil, err
		}
		err = os.Link(tmp.Name(), path)
		os.Remove(tmp.Name())
		if err == nil {
			return tmp, nil
		}
		tmp.Close()
		if !os.IsExist(err) {
			return nil, err
		}
	}
	return nil, fmt.Errorf("%s: could not lock it", path)
}

// same reports whether f is still the file named path.
func same(f *os.File, path string) bool {
	a, err := f.Stat()
	if err != nil {
		return false
	}
	b, err := os.Stat(path)
	return err == nil && os.SameFile(a, b)
}

// tryLock takes f's lock without waiting and reports whether it could: no
// process holds it. Closing f releases it.
func tryLock(f *os.File) (bool, error) {
	err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return false, nil
	}
	return err == nil, err
}
