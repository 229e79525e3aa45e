package main

import (
	"context"
	"testing"
)

// BenchmarkBuildLarge is a full in-process build of the project's content
// plus 5,000 generated pages: what "proofsite build" does, without the
// process around it. It exists to be profiled:
//
//	go test -run '^$' -bench BuildLarge -benchtime 3x -cpuprofile cpu.out ./cmd/sitebench
//	go tool pprof -top -cum cpu.out
//
// Generating the corpus is not timed. Wall times of the real binary against
// Hugo come from "make bench", not from here.
func BenchmarkBuildLarge(b *testing.B) {
	ws, err := newWorkspace(b.TempDir(), projectContent, 1, 5000)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	for b.Loop() {
		res, err := buildInProcess(ctx, ws)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(res.Files), "files/op")
	}
}
