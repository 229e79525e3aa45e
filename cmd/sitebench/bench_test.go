package main

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/proofsite/proofsite/site"
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

// BenchmarkRebuildLarge is the incremental rebuild "proofsite watch" makes
// after one page's body is saved, in the same 5,000-page site: the page's
// file is rewritten (not timed) and Build is called with its path. Profile
// it the same way:
//
//	go test -run '^$' -bench RebuildLarge -benchtime 200x -cpuprofile cpu.out ./cmd/sitebench
func BenchmarkRebuildLarge(b *testing.B) {
	ws, err := newWorkspace(b.TempDir(), projectContent, 1, 5000)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	builder, err := site.New(site.Options{ContentDir: ws.psContent, OutDir: ws.psOut, Incremental: true})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := builder.Build(ctx, nil); err != nil {
		b.Fatal(err)
	}
	k := 0
	for b.Loop() {
		b.StopTimer()
		p := ws.pages[(k*7919+41)%len(ws.pages)]
		k++
		if err := os.WriteFile(ws.proofsitePage(p.Name), p.WithMarker(fmt.Sprintf("bench-%d", k)).File(), 0o644); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		res, err := builder.Build(ctx, []string{genDir + "/" + p.Name + ".md"})
		if err != nil {
			b.Fatal(err)
		}
		if res.Full || res.Rendered != 1 {
			b.Fatalf("rebuild of one page: full %v, rendered %d jobs", res.Full, res.Rendered)
		}
	}
}
