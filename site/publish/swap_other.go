//go:build !linux

package publish

func swap(newDir, dir string) error { return swapByRenames(newDir, dir) }
