//go:build unix

package main

import "syscall"

// settle flushes the file systems (sync(2)) before a timed run, so that it
// does not pay for writing back the output of the run before.
func settle() { syscall.Sync() }
