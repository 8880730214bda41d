//go:build !unix

package sqlitejournal

import "os"

// Without flock, no lock file is made and no owner is ever seen as dead:
// leases are waited out.

func lockOwnerFile(dir, path, owner string) (*os.File, error) { return nil, nil }

func tryLock(*os.File) (bool, error) { return false, nil }
