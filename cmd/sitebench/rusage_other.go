//go:build !linux

package main

import "os"

// maxRSS is not measured off Linux: ru_maxrss has other units elsewhere
// (bytes on macOS) and none on Windows. The report shows 0.
func maxRSS(*os.ProcessState) int64 { return 0 }
