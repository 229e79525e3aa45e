package publish

import (
	"errors"
	"io/fs"
	"os"

	"golang.org/x/sys/unix"
)

// swap makes newDir the output directory dir, and leaves the old output at
// newDir. On Linux both names are exchanged in one step (renameat2
// RENAME_EXCHANGE), so there is no moment without an output directory.
func swap(newDir, dir string) error {
	err := unix.Renameat2(unix.AT_FDCWD, newDir, unix.AT_FDCWD, dir, unix.RENAME_EXCHANGE)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, fs.ErrNotExist):
		if _, statErr := os.Lstat(dir); errors.Is(statErr, fs.ErrNotExist) {
			return os.Rename(newDir, dir) // first build: nothing to exchange
		}
		return err
	case errors.Is(err, unix.EINVAL), errors.Is(err, unix.ENOSYS), errors.Is(err, unix.EOPNOTSUPP):
		return swapByRenames(newDir, dir) // file system without RENAME_EXCHANGE
	default:
		return err
	}
}
