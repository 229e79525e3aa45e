package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"
)

func TestUsage(t *testing.T) {
	tests := []struct {
		desc string
		args []string
		code int
		want string
	}{
		{"help", []string{"-h"}, exitOK, "Usage: sitebench"},
		{"unknown flag", []string{"-nope"}, exitUsage, "flag provided but not defined: -nope"},
		{"stray argument", []string{"extra"}, exitUsage, `unexpected argument "extra"`},
		{"bad sizes", []string{"-pages", "1000,x"}, exitUsage, `-pages: "x"`},
		{"bad phase", []string{"-only", "both"}, exitUsage, "-only must be full or incremental"},
		{"no runs", []string{"-runs", "0"}, exitUsage, "-runs and -edits must be at least 1"},
		{"dangerous work folder", []string{"-work", "."}, exitUsage, "name a folder of its own"},
	}
	for _, tc := range tests {
		t.Run(tc.desc, func(t *testing.T) {
			var out, errOut bytes.Buffer
			code := run(context.Background(), tc.args, &out, &errOut)
			if code != tc.code {
				t.Errorf("exit %d, want %d", code, tc.code)
			}
			if !strings.Contains(out.String()+errOut.String(), tc.want) {
				t.Errorf("output %q does not contain %q", out.String()+errOut.String(), tc.want)
			}
		})
	}
}

func TestParseFlags(t *testing.T) {
	cfg, err := parseFlags([]string{"-pages", "5000, 1000,1000", "-runs", "7", "-only", "full", "-keep", "-spacing", "1s"}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.pages; len(got) != 2 || got[0] != 1000 || got[1] != 5000 {
		t.Errorf("pages %v, want [1000 5000]", got)
	}
	if cfg.runs != 7 || cfg.only != phaseFull || !cfg.keep || cfg.spacing != time.Second || cfg.edits != 10 {
		t.Errorf("config %+v", cfg)
	}
}

func TestReport(t *testing.T) {
	full := fullResult{
		Pages: 1000, Tools: []string{"proofsite", "hugo"},
		Samples: map[string][]sample{
			"proofsite": {{Wall: 400 * time.Millisecond, CPU: time.Second, MaxRSS: 50 << 10}, {Wall: 420 * time.Millisecond, CPU: time.Second, MaxRSS: 52 << 10}},
			"hugo":      {{Wall: time.Second, CPU: 2 * time.Second, MaxRSS: 100 << 10}, {Wall: time.Second, CPU: 2 * time.Second, MaxRSS: 40 << 10}},
		},
		Files: map[string]int{"proofsite": 2100, "hugo": 1004},
	}
	r := &report{
		cfg:       config{runs: 2, spacing: 300 * time.Millisecond},
		facts:     facts{CPU: "Test CPU", Cores: 2, Proofsite: "abc"},
		full:      []fullResult{full},
		livePages: 5000,
		live: []liveResult{
			{Tool: "proofsite", Latencies: []time.Duration{5 * time.Millisecond, 7 * time.Millisecond, 30 * time.Millisecond}},
			{Tool: "hugo", Latencies: []time.Duration{time.Second}},
			{Tool: "hugo-nofast", Err: errors.New("exited | early")},
		},
	}
	var out bytes.Buffer
	if err := r.write(&out); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []string{
		"| CPU | Test CPU |",
		"| 1,000 | proofsite | 410 ms | 400 ms–420 ms | 1000 ms | 51.0 MiB | 2,100 |",
		"| 1,000 | **proofsite / hugo** | **0.41×** | | 0.50× | **0.73×** | |",
		"| Full build, 1,000 pages: wall ≤ 0.5× Hugo's | 0.41× (410 ms vs 1000 ms) | **PASS** |",
		"| Full build, 1,000 pages: peak RSS ≤ Hugo's | 0.73× (51.0 MiB vs 70.0 MiB) | **PASS** |",
		"| Incremental single-page rebuild, median ≤ 20.0 ms | 7.00 ms (Hugo: 1000 ms in fast render mode) | **PASS** |",
		"failed: exited \\| early",
		"## How it was measured",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("report lacks %q:\n%s", want, got)
		}
	}
}

func TestFileFacts(t *testing.T) {
	dir := t.TempDir()
	if got := fileSystem(dir); got == "" {
		t.Error("no file system")
	}
	d, err := fileCreateCost(dir)
	if err != nil || d <= 0 {
		t.Errorf("create cost %v, %v", d, err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("left %d entries behind", len(entries))
	}
}
