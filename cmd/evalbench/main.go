// Command evalbench measures the constitutional evaluator (live/eval):
// its quality on labelled texts, beside a simple substring heuristic
// measured on the same texts, and its speed.
//
// Quality is reported on the project's held-out split
// (live/eval/testdata/corpus/heldout.jsonl; -split dev or both for the
// others) and on the shared held-out set (-shared, default
// ../shared/eval/heldout: 1,200 texts from published research data sets,
// read at run time and never copied; -shared "" skips it). For the shared set only aggregate
// figures are printed: never a text or a per-item result. The shared
// set's categories are mapped to the evaluator's from its SOURCES.md:
// prompt_injection and jailbreak to themselves, prompt_extraction to
// exfiltration, harmful to harmful_content; ordinary and hard_negative are
// benign. See package quality for how precision, recall and F1 are
// defined.
//
// Speed: Evaluate of 2 KB texts (assembled from the corpus) with the
// offline stages, one at a time (p50, p99) and on every core at once
// (texts/s). The machine may be shared; figures are rough.
//
// Usage (from the repository root; "make bench-eval" does this):
//
//	go run ./cmd/evalbench [-split heldout|dev|both] [-shared DIR] [-misses N] [-speed=false]
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
