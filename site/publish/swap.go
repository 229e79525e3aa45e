package publish

import (
	"errors"
	"io/fs"
	"os"
)

// swapByRenames swaps with two renames, leaving a short moment without an
// output directory.
func swapByRenames(newDir, dir string) error {
	old := newDir + ".old"
	if err := os.Rename(dir, old); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return os.Rename(newDir, dir)
		}
		return err
	}
	if err := os.Rename(newDir, dir); err != nil {
		return errors.Join(err, os.Rename(old, dir))
	}
	return os.Rename(old, newDir)
}
