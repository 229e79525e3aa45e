//go:build !linux

package publish

import "os"

// createFile writes data to the new file name.
func createFile(name string, data []byte) error { return os.WriteFile(name, data, 0o644) }
