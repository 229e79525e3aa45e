// Command sitebench measures how fast proofsite builds a large site, against
// Hugo building the same pages, and prints the result as a markdown report.
//
// It generates a deterministic corpus of ~1.5 KB pages (package corpus),
// adds it to a copy of the project's content (content/pages/gen/) and to a
// minimal Hugo site (content/gen/, layouts and goldmark settings matching
// proofsite's; see hugo.go for the fairness choices), then measures:
//
//   - full builds of 1,000 and 5,000 generated pages: "proofsite build"
//     against "hugo", interleaved (proofsite, hugo, proofsite, ...), one
//     warm-up each, the median of -runs runs; wall time, CPU time and peak
//     RSS of each process;
//   - incremental rebuild latency in the 5,000-page site: "proofsite watch"
//     against "hugo server --renderToDisk", one after the other; for each of
//     -edits edits, the time from just before one page's file is rewritten to
//     the moment its output HTML is complete on disk and holds the edit. Hugo
//     runs with live reload on, which its fast render mode needs, and one
//     request for its home page; -hugo-nofast adds --disableLiveReload.
//
// Usage (from the repository root; "make bench" does this):
//
//	go build -o bin/proofsite ./cmd/proofsite
//	go run ./cmd/sitebench [-pages 1000,5000] [-runs 5] [-edits 10] [-only full|incremental] [-keep] [-hugo-nofast]
//
// Everything generated goes under -work (bench/out/site/, ignored by git), which
// is removed at the end unless -keep is given.
//
// To see where a large build spends its time, take a CPU profile of an
// in-process 5,000-page build, either through this command or through the Go
// benchmark beside it:
//
//	go run ./cmd/sitebench -profile cpu.out -pages 5000
//	go test -run '^$' -bench BuildLarge -benchtime 3x -cpuprofile cpu.out ./cmd/sitebench
//	go tool pprof -top -cum cpu.out
//
// BenchmarkRebuildLarge does the same for the one-page rebuild of watch mode
// (-bench RebuildLarge -benchtime 500x; the first full build is in the
// profile too, so focus with -focus 'Builder..Build' -ignore Stage).
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
