package main

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// The testdata files are real wrk 4.1.0 (Debian) reports captured on
// loopback: against the live edge with 64 connections, a 404 route
// (non-2xx), one connection, and a server answering after 1.2 s (latencies
// in seconds; with --timeout 1s every request timed out).
func TestParseWrk(t *testing.T) {
	tests := []struct {
		file string
		want wrkResult
	}{
		{"verify-64c.txt", wrkResult{Requests: 39653, RequestsPerSec: 19677.28, P99: 24140 * time.Microsecond}},
		{"non2xx.txt", wrkResult{Requests: 49146, RequestsPerSec: 24509.17, P99: 5860 * time.Microsecond, Non2xx: 49146}},
		{"one-connection.txt", wrkResult{Requests: 27959, RequestsPerSec: 13887.05, P99: 23880 * time.Microsecond}},
		{"seconds.txt", wrkResult{Requests: 12, RequestsPerSec: 2.98, P99: 1240 * time.Millisecond}},
		{"timeouts.txt", wrkResult{Requests: 8, RequestsPerSec: 2.66, P99: 0, SocketErrors: 8}},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			out, err := os.ReadFile(filepath.Join("testdata", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			got, err := parseWrk(string(out))
			if err != nil {
				t.Fatalf("parseWrk: %v", err)
			}
			if got != tc.want {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
			if got.clean() != (tc.want.Non2xx == 0 && tc.want.SocketErrors == 0) {
				t.Errorf("clean() = %v", got.clean())
			}
		})
	}
}

func TestParseWrkRefusesIncompleteReports(t *testing.T) {
	full, err := os.ReadFile(filepath.Join("testdata", "verify-64c.txt"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		desc, out string
	}{
		{"empty", ""},
		{"wrk usage", "Usage: wrk <options> <url>\n  Options:\n"},
		{"no --latency", "  39653 requests in 2.02s, 87.31MB read\nRequests/sec:  19677.28\n"},
		{"no rate", string(full[:len(full)-len("Requests/sec:  19677.28\nTransfer/sec:     43.33MB\n")])},
		{"bad latency", "  Latency Distribution\n     99%   fast\n  1 requests in 1.00s, 1B read\nRequests/sec: 1\n"},
		{"bad socket errors", string(full) + "  Socket errors: connect x\n"},
	}
	for _, tc := range tests {
		t.Run(tc.desc, func(t *testing.T) {
			if got, err := parseWrk(tc.out); err == nil {
				t.Errorf("parseWrk = %+v, want an error", got)
			}
		})
	}
}

func TestParseWrkDuration(t *testing.T) {
	tests := []struct {
		in   string
		want time.Duration
	}{
		{"95.00us", 95 * time.Microsecond},
		{"0.85ms", 850 * time.Microsecond},
		{"20.93ms", 20930 * time.Microsecond},
		{"1.24s", 1240 * time.Millisecond},
		{"2.00m", 2 * time.Minute},
		{"1.50h", 90 * time.Minute},
	}
	for _, tc := range tests {
		got, err := parseWrkDuration(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("parseWrkDuration(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{"", "12", "ms", "-1ms", "1.2.3ms", "12ns"} {
		if got, err := parseWrkDuration(bad); err == nil {
			t.Errorf("parseWrkDuration(%q) = %v, want an error", bad, got)
		}
	}
}

func TestWrkArgs(t *testing.T) {
	got := wrkRun{threads: 2, connections: 64, duration: 10 * time.Second, url: "http://127.0.0.1:1/x"}.args()
	want := []string{"-t2", "-c64", "-d10s", "--latency", "http://127.0.0.1:1/x"}
	if !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	got = wrkRun{threads: 2, connections: 64, duration: 10 * time.Second, url: "http://127.0.0.1:1/mcp", script: "/w/mcp.lua"}.args()
	want = []string{"-t2", "-c64", "-d10s", "--latency", "-s", "/w/mcp.lua", "http://127.0.0.1:1/mcp"}
	if !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}
