//go:build race

package quality

// raceEnabled says the race detector is on (see norace_test.go).
const raceEnabled = true
