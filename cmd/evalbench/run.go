package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/proofsite/proofsite/live/eval"
	"github.com/proofsite/proofsite/live/eval/quality"
)

// Exit codes.
const (
	exitOK      = 0
	exitFailure = 1
	exitUsage   = 64
)

// config is the parsed command line.
type config struct {
	content  string
	corpus   string
	shared   string
	split    string
	misses   int
	speed    bool
	duration time.Duration
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	cfg, err := parseFlags(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	if err != nil {
		fmt.Fprintf(stderr, "evalbench: %v (run \"evalbench -h\")\n", err)
		return exitUsage
	}
	if err := bench(ctx, cfg, stdout, stderr); err != nil {
		fmt.Fprintf(stderr, "evalbench: %v\n", err)
		return exitFailure
	}
	return exitOK
}

func parseFlags(args []string, stderr io.Writer) (config, error) {
	fs := flag.NewFlagSet("evalbench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "Usage: evalbench [flags]\n\nMeasures the evaluator's quality and speed and prints a markdown report.\n\nFlags:")
		fs.PrintDefaults()
	}
	var cfg config
	fs.StringVar(&cfg.content, "content", "content", "the content `folder` holding eval/patterns.yaml and eval/exemplars/")
	fs.StringVar(&cfg.corpus, "corpus", "live/eval/testdata/corpus", "the project's corpus `folder` (dev.jsonl, heldout.jsonl)")
	fs.StringVar(&cfg.shared, "shared", "../shared/eval/heldout", "the shared held-out set's `folder` (measured, never tuned on); empty: not measured")
	fs.StringVar(&cfg.split, "split", quality.Heldout, "the project's `split` to report: heldout, dev or both")
	fs.IntVar(&cfg.misses, "misses", 0, "print up to `n` misses and false positives of the project's dev split (never of a held-out set)")
	fs.BoolVar(&cfg.speed, "speed", true, "measure speed too")
	fs.DurationVar(&cfg.duration, "speed-time", 3*time.Second, "how long each speed measurement runs")
	if err := fs.Parse(args); err != nil {
		return config{}, err
	}
	if fs.NArg() > 0 {
		return config{}, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	switch cfg.split {
	case quality.Heldout, quality.Dev, "both":
	default:
		return config{}, fmt.Errorf("-split must be heldout, dev or both, not %q", cfg.split)
	}
	if cfg.misses < 0 || cfg.duration <= 0 {
		return config{}, errors.New("-misses must be 0 or more and -speed-time positive")
	}
	return cfg, nil
}

// bench loads the evaluator and runs the measurements the flags ask for.
func bench(ctx context.Context, cfg config, stdout, stderr io.Writer) error {
	data, err := eval.LoadFS(os.DirFS(cfg.content))
	if err != nil {
		return err
	}
	ev, err := eval.New(eval.Options{Data: data})
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "# Evaluator benchmark\n\npatterns %s (%d, sha256 %.12s), lexical model of %d features\n\n", data.Version, len(data.Patterns), data.Digest, data.Lexical.Features())

	splits := []string{cfg.split}
	if cfg.split == "both" {
		splits = []string{quality.Dev, quality.Heldout}
	}
	var projectHeldout *quality.Table
	for _, split := range splits {
		samples, err := quality.ReadFile(filepath.Join(cfg.corpus, split+".jsonl"))
		if err != nil {
			return err
		}
		ours, base, err := measure(ctx, ev, samples, nil)
		if err != nil {
			return err
		}
		fmt.Fprintln(stdout, quality.Compare(fmt.Sprintf("Project corpus, %s split (%d texts)", split, len(samples)), ours, base, "evaluator", "substring"))
		if split == quality.Heldout {
			projectHeldout = &ours
		}
	}
	if cfg.misses > 0 {
		if err := printMisses(ctx, ev, cfg, stdout); err != nil {
			return err
		}
	}

	var shared []quality.Sample
	if cfg.shared != "" {
		shared, err = readShared(cfg.shared)
	}
	var sharedTable *quality.Table
	switch {
	case cfg.shared == "":
		fmt.Fprintf(stdout, "Shared held-out set: not measured (-shared \"\").\n\n")
	case errors.Is(err, os.ErrNotExist):
		fmt.Fprintf(stdout, "Shared held-out set not found at %s: skipped (it is read from there at run time, never copied into the repository).\n\n", cfg.shared)
	case err != nil:
		return err
	default:
		ours, base, err := measure(ctx, ev, shared, sharedCategory)
		if err != nil {
			return err
		}
		fmt.Fprintln(stdout, quality.Compare(fmt.Sprintf("Shared held-out set, %s (%d texts; measured, never tuned on)", cfg.shared, len(shared)), ours, base, "evaluator", "substring"))
		sharedTable = &ours
	}
	printTargets(stdout, projectHeldout, sharedTable)

	if cfg.speed {
		corpus, err := quality.ReadFile(filepath.Join(cfg.corpus, quality.Dev+".jsonl"))
		if err != nil {
			return err
		}
		if err := speed(ctx, ev, corpus, cfg.duration, stdout); err != nil {
			return err
		}
	}
	return nil
}

// measure evaluates every sample and scores the evaluator and the
// substring heuristic on them.
func measure(ctx context.Context, ev *eval.Evaluator, samples []quality.Sample, mapCategory func(string) string) (ours, base quality.Table, err error) {
	preds := make([]quality.Prediction, len(samples))
	basePreds := make([]quality.Prediction, len(samples))
	for i, s := range samples {
		r, err := ev.Evaluate(ctx, s.Text)
		if err != nil {
			return quality.Table{}, quality.Table{}, fmt.Errorf("sample %d: %w", i, err)
		}
		preds[i] = quality.Predict(r)
		basePreds[i] = quality.Substring(s.Text)
	}
	return quality.Score(samples, preds, mapCategory), quality.Score(samples, basePreds, mapCategory), nil
}

// printMisses prints the dev split's misses and false positives, for tuning.
func printMisses(ctx context.Context, ev *eval.Evaluator, cfg config, stdout io.Writer) error {
	samples, err := quality.ReadFile(filepath.Join(cfg.corpus, quality.Dev+".jsonl"))
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "### Dev split: misses and false positives (up to %d)\n\n", cfg.misses)
	n := 0
	for _, s := range samples {
		r, err := ev.Evaluate(ctx, s.Text)
		if err != nil {
			return err
		}
		p := quality.Predict(r)
		if p.Flagged == (s.Label == quality.Attack) {
			continue
		}
		var ids []string
		for _, f := range r.Flags {
			ids = append(ids, f.ID)
		}
		fmt.Fprintf(stdout, "- %s [%s %s] score %d flags %v: %.160q\n", s.ID, s.Label, s.Category, r.Score, ids, s.Text)
		if n++; n >= cfg.misses {
			break
		}
	}
	fmt.Fprintln(stdout)
	return nil
}
