package publish

import (
	"io/fs"
	"os"

	"golang.org/x/sys/unix"
)

// createFile writes data to the new file name, which must not exist. A full
// build creates thousands of files, so this is the bare open, write and close
// (os.WriteFile also sets each file up for the runtime's poller, five more
// system calls that a regular file does not use).
func createFile(name string, data []byte) error {
	fd, err := unix.Open(name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_CLOEXEC, 0o644)
	if err != nil {
		return &fs.PathError{Op: "open", Path: name, Err: err}
	}
	for len(data) > 0 && err == nil {
		var n int
		if n, err = unix.Write(fd, data); err == nil {
			data = data[n:]
		}
		if err == unix.EINTR {
			err = nil
		}
	}
	if cerr := unix.Close(fd); err == nil && cerr != nil {
		err = cerr
	}
	if err != nil {
		os.Remove(name)
		return &fs.PathError{Op: "write", Path: name, Err: err}
	}
	return nil
}
