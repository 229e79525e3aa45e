//go:build !unix

package main

// settle does nothing where sync(2) does not exist.
func settle() {}
