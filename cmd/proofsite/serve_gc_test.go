package main

import (
	"runtime/debug"
	"testing"
)

// TestTuneServeGC: serve sets GOGC=200 and a soft limit of 1 GiB unless
// the environment sets them.
func TestTuneServeGC(t *testing.T) {
	percent, limit := debug.SetGCPercent(100), debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetGCPercent(percent); debug.SetMemoryLimit(limit) })
	for _, tc := range []struct {
		env     map[string]string
		percent int
		limit   int64
	}{
		{env: nil, percent: 200, limit: 1 << 30},
		{env: map[string]string{"GOGC": "100", "GOMEMLIMIT": "64MiB"}, percent: 100, limit: 1 << 40},
	} {
		debug.SetGCPercent(100)
		debug.SetMemoryLimit(1 << 40)
		tuneServeGC(&environment{getenv: func(k string) string { return tc.env[k] }})
		if got := debug.SetGCPercent(100); got != tc.percent {
			t.Errorf("env %v: GOGC %d, want %d", tc.env, got, tc.percent)
		}
		if got := debug.SetMemoryLimit(-1); got != tc.limit {
			t.Errorf("env %v: memory limit %d, want %d", tc.env, got, tc.limit)
		}
	}
}
