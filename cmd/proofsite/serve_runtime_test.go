package main

import (
	"runtime"
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

// TestTuneServeProcs: serve runs one more P than it has cores and
// evaluates on the cores, unless the environment sets GOMAXPROCS.
func TestTuneServeProcs(t *testing.T) {
	procs := runtime.GOMAXPROCS(0)
	t.Cleanup(func() { runtime.GOMAXPROCS(procs) })
	for _, tc := range []struct {
		env         string // GOMAXPROCS in the environment
		set         int    // GOMAXPROCS before the call
		cores       int
		wantProcs   int
		description string
	}{
		{env: "", set: 2, cores: 2, wantProcs: 3, description: "default: one P more than the cores"},
		{env: "", set: 1, cores: 1, wantProcs: 2, description: "one core"},
		{env: "3", set: 3, cores: min(3, runtime.NumCPU()), wantProcs: 3, description: "the environment wins"},
		{env: "1", set: 1, cores: 1, wantProcs: 1, description: "the environment wins, fewer Ps than CPUs"},
	} {
		runtime.GOMAXPROCS(tc.set)
		cores := tuneServeProcs(&environment{getenv: func(k string) string {
			if k == "GOMAXPROCS" {
				return tc.env
			}
			return ""
		}})
		if got := runtime.GOMAXPROCS(0); cores != tc.cores || got != tc.wantProcs {
			t.Errorf("%s: cores %d, GOMAXPROCS %d; want %d, %d", tc.description, cores, got, tc.cores, tc.wantProcs)
		}
	}
}
