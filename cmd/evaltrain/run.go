package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/proofsite/proofsite/live/eval"
	"github.com/proofsite/proofsite/live/eval/quality"
)

// Exit codes.
const (
	exitOK      = 0
	exitFailure = 1
	exitUsage   = 64
)

type config struct {
	content, corpus, out string
	check                bool
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("evaltrain", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "Usage: evaltrain [flags]\n\nTrains the evaluator's lexical model on the dev split and the exemplars.\n\nFlags:")
		fs.PrintDefaults()
	}
	var cfg config
	fs.StringVar(&cfg.content, "content", "content", "the content `folder` holding eval/exemplars/ and eval/lexicon.txt")
	fs.StringVar(&cfg.corpus, "corpus", "live/eval/testdata/corpus", "the project's corpus `folder` (its dev.jsonl is read)")
	fs.StringVar(&cfg.out, "out", "", "where to write the weights (default CONTENT/"+eval.LexicalFile+")")
	fs.BoolVar(&cfg.check, "check", false, "do not write: exit 1 if the weights file differs from what training makes")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		fmt.Fprintf(stderr, "evaltrain: %v (run \"evaltrain -h\")\n", err)
		return exitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "evaltrain: unexpected argument %q (run \"evaltrain -h\")\n", fs.Arg(0))
		return exitUsage
	}
	if cfg.out == "" {
		cfg.out = filepath.Join(cfg.content, eval.LexicalFile)
	}
	if err := train(cfg, stdout); err != nil {
		fmt.Fprintf(stderr, "evaltrain: %v\n", err)
		return exitFailure
	}
	return exitOK
}

func train(cfg config, stdout io.Writer) error {
	dev, err := quality.ReadFile(filepath.Join(cfg.corpus, quality.Dev+".jsonl"))
	if err != nil {
		return err
	}
	exemplars, err := eval.LoadExemplars(os.DirFS(cfg.content))
	if err != nil {
		return err
	}
	tc := quality.DefaultTrainConfig
	if tc.Options.Lexicon, err = quality.LoadLexicon(os.DirFS(cfg.content)); err != nil {
		return err
	}
	if tc.Caught, err = quality.CaughtByOtherStages(context.Background(), os.DirFS(cfg.content)); err != nil {
		return err
	}
	m, rep, err := quality.TrainLexical(dev, exemplars, tc)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if _, err := m.WriteTo(&buf); err != nil {
		return err
	}
	fmt.Fprint(stdout, rep)
	fmt.Fprintf(stdout, "%d features\n", m.Features())
	if cfg.check {
		old, err := os.ReadFile(cfg.out)
		if err != nil {
			return err
		}
		if !bytes.Equal(old, buf.Bytes()) {
			return fmt.Errorf("%s differs from what training makes; run go run ./cmd/evaltrain", cfg.out)
		}
		fmt.Fprintf(stdout, "%s is up to date\n", cfg.out)
		return nil
	}
	tmp := cfg.out + ".tmp"
	if err := os.WriteFile(tmp, buf.Bytes(), 0o644); err != nil {
		return err
	}
	if err := os.Rename(tmp, cfg.out); err != nil {
		os.Remove(tmp)
		return err
	}
	fmt.Fprintf(stdout, "wrote %s\n", cfg.out)
	return nil
}
