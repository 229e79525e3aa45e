//go:build !race

package quality

// raceEnabled says the race detector is on (see race_test.go).
const raceEnabled = false
