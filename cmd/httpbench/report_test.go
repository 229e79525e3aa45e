package main

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// The report of a made-up run, as the closing note quotes it.
func TestWriteReport(t *testing.T) {
	ms := time.Millisecond
	targets := newTargets(servers{proofsite: server{"http://127.0.0.1:1", 1}, bare: server{"http://127.0.0.1:2", 2}, nginx: server{"http://127.0.0.1:3", 3},
		chat: server{"http://127.0.0.1:4", 4}})
	results := map[string][]wrkResult{
		"bare":             {{RequestsPerSec: 74273.1, P99: 8180 * time.Microsecond, OthersCPU: 0.01}, {RequestsPerSec: 70000, P99: 12 * ms, OthersCPU: 0.3}},
		"verify":           {{RequestsPerSec: 60931, P99: 9 * ms, OthersCPU: 0.02}, {RequestsPerSec: 30000, P99: 30 * ms, OthersCPU: -1}},
		"status":           {{RequestsPerSec: 56568, P99: 9 * ms, OthersCPU: 0.19}, {RequestsPerSec: 50000, P99: 11 * ms, OthersCPU: 0.2}},
		"chat":             {{RequestsPerSec: 38000, P99: 12 * ms, OthersCPU: 0.05}, {RequestsPerSec: 36000, P99: 14 * ms, OthersCPU: 0.1}},
		"evaluate":         {{RequestsPerSec: 9800, P99: 18 * ms, OthersCPU: 0.05}, {RequestsPerSec: 10400, P99: 16 * ms, OthersCPU: 0.1}},
		"mcp-list":         {{RequestsPerSec: 31250, P99: 14 * ms, OthersCPU: 0.05}, {RequestsPerSec: 29000, P99: 16 * ms, OthersCPU: 0.1}},
		"mcp-verdict":      {{RequestsPerSec: 1480, P99: 95 * ms, OthersCPU: 0.05}, {RequestsPerSec: 1500, P99: 90 * ms, OthersCPU: 0.1}},
		"static-proofsite": {{RequestsPerSec: 49064, P99: 39 * ms, OthersCPU: 0.22}, {RequestsPerSec: 30000, P99: 5 * ms, Non2xx: 2, OthersCPU: 0.1}},
		"static-nginx":     {{RequestsPerSec: 50439, P99: 97 * ms, OthersCPU: 0.17}, {RequestsPerSec: 50000, P99: 6 * ms, OthersCPU: 0.1}},
		"tile-proofsite":   {{RequestsPerSec: 45000, P99: 8 * ms, OthersCPU: 0.1}, {RequestsPerSec: 44000, P99: 9 * ms, OthersCPU: 0.1}},
		"tile-nginx":       {{RequestsPerSec: 52000, P99: 6 * ms, OthersCPU: 0.1}, {RequestsPerSec: 51000, P99: 7 * ms, OthersCPU: 0.1}},
	}
	for _, tg := range targets {
		tg.results = results[tg.name]
		for i := range tg.results { // a made-up CPU cost: 1.9 cores' worth over 10 s
			r := &tg.results[i]
			r.Requests, r.ServerCPU = int64(r.RequestsPerSec*10), 19*time.Second
		}
	}
	var sums []summary
	for _, tg := range targets {
		sums = append(sums, summarize(tg))
	}
	cfg := config{threads: 2, connections: 64, duration: 10 * time.Second, warmup: 2 * time.Second, rounds: 2, gomaxprocs: 2}
	f := facts{cpu: "Test CPU", cores: 2, kernel: "6.1", goVersion: "go1.26.8", commit: "0123456789ab", wrk: "wrk 4.1.0", nginx: "nginx/1.22.1",
		loadBefore: "0.50 0.40 0.30", loadAfter: "2.10 1.00 0.50", when: time.Date(2026, 11, 21, 17, 0, 0, 0, time.UTC)}
	var got bytes.Buffer
	writeReport(&got, cfg, sums, targets, f)

	golden := filepath.Join("testdata", "report.golden.md")
	if *update {
		if err := os.WriteFile(golden, got.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), want) {
		t.Errorf("report differs from %s (go test -update to accept):\n%s", golden, got.Bytes())
	}
}
