package main

import (
	"os"
	"testing"
)

func TestParseCPUStat(t *testing.T) {
	// The start of a real /proc/stat (2 CPUs).
	got, err := parseCPUStat("cpu  847309 9 152278 381286 2705 0 14884 6853 0 0\ncpu0 423654 4 76139 190643 1352 0 7442 3426 0 0\n")
	if err != nil {
		t.Fatal(err)
	}
	if want := (cpuStat{busy: 847309 + 9 + 152278 + 14884 + 6853, total: 847309 + 9 + 152278 + 381286 + 2705 + 14884 + 6853}); got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
	for _, bad := range []string{"", "intr 1 2 3", "cpu  1 2 3", "cpu  1 2 3 x 5 6 7 8 9 10"} {
		if _, err := parseCPUStat(bad); err == nil {
			t.Errorf("parseCPUStat(%q) gave no error", bad)
		}
	}
}

func TestParseProcStat(t *testing.T) {
	tests := []struct {
		desc, line string
		pgrp       int
		ticks      int64
	}{
		{"real", "17197 (cat) R 17195 17195 17546 0 -1 4194304 103 0 0 0 0 0 0 0 20 0 1 0 702934 3133440 417 18446744073709551615 0", 17195, 0},
		{"busy server", "4242 (proofsite) S 1 4242 17546 0 -1 4194560 9013 0 0 0 1234 567 0 0 20 0 9 0 70 1 1", 4242, 1801},
		{"name with spaces and parens", "77 (a) b (c)) S 1 70 70 0 -1 0 0 0 0 0 3 4 0 0 20 0 1 0 1 1 1", 70, 7},
	}
	for _, tc := range tests {
		t.Run(tc.desc, func(t *testing.T) {
			pgrp, ticks, err := parseProcStat(tc.line)
			if err != nil || pgrp != tc.pgrp || ticks != tc.ticks {
				t.Errorf("got %d, %d, %v; want %d, %d", pgrp, ticks, err, tc.pgrp, tc.ticks)
			}
		})
	}
	for _, bad := range []string{"", "1 (x) S 1 2", "1 (x) S 1 x 3 4 5 6 7 8 9 10 11 12"} {
		if _, _, err := parseProcStat(bad); err == nil {
			t.Errorf("parseProcStat(%q) gave no error", bad)
		}
	}
}

func TestOthersShare(t *testing.T) {
	before := cpuStat{busy: 1000, total: 5000}
	tests := []struct {
		desc  string
		after cpuStat
		ours  int64
		want  float64
	}{
		{"only us", cpuStat{busy: 3000, total: 7000}, 2000, 0},
		{"a quarter others", cpuStat{busy: 3000, total: 7000}, 1500, 0.25},
		{"idle", cpuStat{busy: 1000, total: 7000}, 0, 0},
		{"our count ahead of the machine's", cpuStat{busy: 2000, total: 7000}, 1100, 0},
		{"no time passed", before, 0, 0},
	}
	for _, tc := range tests {
		if got := othersShare(before, tc.after, tc.ours); got != tc.want {
			t.Errorf("%s: got %v, want %v", tc.desc, got, tc.want)
		}
	}
}

// The live /proc of this machine parses, and this process's group holds at
// least this process.
func TestReadProc(t *testing.T) {
	if _, err := os.Stat("/proc/stat"); err != nil {
		t.Skip("no /proc")
	}
	if _, err := readCPUStat(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		t.Fatal(err)
	}
	pgrp, _, err := parseProcStat(string(b))
	if err != nil {
		t.Fatal(err)
	}
	if groupTicks(pgrp) < 0 {
		t.Error("negative CPU time")
	}
}
