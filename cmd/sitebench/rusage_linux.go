package main

import (
	"os"
	"syscall"
)

// maxRSS returns the peak resident set size of an exited process in KiB
// (Linux reports ru_maxrss in KiB).
func maxRSS(st *os.ProcessState) int64 {
	if ru, ok := st.SysUsage().(*syscall.Rusage); ok {
		return ru.Maxrss
	}
	return 0
}
