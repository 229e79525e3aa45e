package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Exit codes.
const (
	exitOK      = 0
	exitFailure = 1
	exitUsage   = 64 // EX_USAGE: the command line was wrong
)

// Phases that -only selects.
const (
	phaseFull        = "full"
	phaseIncremental = "incremental"
)

// config is the parsed command line.
type config struct {
	pages       []int         // corpus sizes of the full-build phase
	runs        int           // measured runs per tool and size
	edits       int           // measured edits per tool in the incremental phase
	livePages   int           // corpus size of the incremental phase
	only        string        // "", phaseFull or phaseIncremental
	keep        bool          // keep the work folder
	work        string        // work folder
	content     string        // the project's content folder, copied under work
	proofsite   string        // the proofsite binary
	hugo        string        // the hugo binary
	seed        uint64        // corpus seed
	spacing     time.Duration // pause between one edit's completion and the next edit
	editTimeout time.Duration // how long one edit may take before the phase fails
	profile     string        // write a CPU profile of an in-process build here instead of benchmarking
	hugoNoFast  bool          // also measure hugo server --disableLiveReload
	// firstWarmup is how long the first warm-up edit may take before it is
	// retried (tests shorten it); 0 means warmupTimeout.
	firstWarmup time.Duration
}

// run executes one sitebench command line and returns the exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	cfg, err := parseFlags(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	if err != nil {
		fmt.Fprintf(stderr, "sitebench: %v (run \"sitebench -h\")\n", err)
		return exitUsage
	}
	log := slog.New(slog.NewTextHandler(stderr, nil))
	if cfg.profile != "" {
		err = profileBuild(ctx, cfg, stdout, log)
	} else {
		err = benchmark(ctx, cfg, stdout, log)
	}
	if err != nil {
		fmt.Fprintf(stderr, "sitebench: %v\n", err)
		return exitFailure
	}
	return exitOK
}

func parseFlags(args []string, stderr io.Writer) (config, error) {
	fs := flag.NewFlagSet("sitebench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "Usage: sitebench [flags]\n\nBenchmarks proofsite's full and incremental builds against Hugo and prints a markdown report.\n\nFlags:")
		fs.PrintDefaults()
	}
	var (
		cfg   config
		pages string
	)
	fs.StringVar(&pages, "pages", "1000,5000", "comma-separated `sizes` (generated pages) of the full-build phase")
	fs.IntVar(&cfg.runs, "runs", 5, "measured full builds per tool and size, after one warm-up each")
	fs.IntVar(&cfg.edits, "edits", 10, "measured edits per tool in the incremental phase, after warm-up edits")
	fs.IntVar(&cfg.livePages, "live-pages", 5000, "generated pages in the incremental phase's site")
	fs.StringVar(&cfg.only, "only", "", "run one `phase` only: full or incremental")
	fs.BoolVar(&cfg.keep, "keep", false, "keep the work folder (sites, outputs, logs of the live servers)")
	fs.StringVar(&cfg.work, "work", "bench/out/site", "work `folder`; everything generated goes here, and it is removed at the end unless -keep")
	fs.StringVar(&cfg.content, "content", "content", "the project's content `folder`, copied and extended with the corpus")
	fs.StringVar(&cfg.proofsite, "proofsite", "bin/proofsite", "proofsite `binary`")
	fs.StringVar(&cfg.hugo, "hugo", "hugo", "hugo `binary`")
	fs.Uint64Var(&cfg.seed, "seed", 1, "corpus seed; the same seed gives the same pages")
	fs.DurationVar(&cfg.spacing, "spacing", 300*time.Millisecond, "pause after one edit completed before the next, so debouncing cannot merge edits")
	fs.DurationVar(&cfg.editTimeout, "edit-timeout", 2*time.Minute, "how long one edit may take to reach the output")
	fs.BoolVar(&cfg.hugoNoFast, "hugo-nofast", false, "also measure hugo server with --disableLiveReload, which in Hugo 0.111 also turns fast render off (slow: a full re-render per edit)")
	fs.StringVar(&cfg.profile, "profile", "", "instead of benchmarking, build the largest -pages site in-process and write a CPU profile to `file`")
	if err := fs.Parse(args); err != nil {
		return config{}, err
	}
	if fs.NArg() > 0 {
		return config{}, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	var err error
	if cfg.pages, err = parseSizes(pages); err != nil {
		return config{}, err
	}
	switch {
	case cfg.only != "" && cfg.only != phaseFull && cfg.only != phaseIncremental:
		return config{}, fmt.Errorf("-only must be %s or %s, not %q", phaseFull, phaseIncremental, cfg.only)
	case cfg.runs < 1 || cfg.edits < 1:
		return config{}, errors.New("-runs and -edits must be at least 1")
	case cfg.livePages < 10:
		return config{}, errors.New("-live-pages must be at least 10")
	case cfg.work == "" || cfg.work == "/" || cfg.work == ".":
		return config{}, fmt.Errorf("-work %q would be removed at the end; name a folder of its own", cfg.work)
	}
	return cfg, nil
}

// parseSizes parses "1000,5000".
func parseSizes(s string) ([]int, error) {
	var sizes []int
	for f := range strings.SplitSeq(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("-pages: %q is not a positive number", f)
		}
		sizes = append(sizes, n)
	}
	slices.Sort(sizes)
	return slices.Compact(sizes), nil
}

// benchmark runs the phases the configuration selects and prints the report.
func benchmark(ctx context.Context, cfg config, stdout io.Writer, log *slog.Logger) error {
	if err := os.MkdirAll(cfg.work, 0o755); err != nil {
		return fmt.Errorf("work folder: %w", err)
	}
	if !cfg.keep {
		defer os.RemoveAll(cfg.work)
	}
	rep := &report{cfg: cfg, facts: gatherFacts(ctx, cfg)}
	log.Info("machine", "cpu", rep.facts.CPU, "cores", rep.facts.Cores, "load", rep.facts.Load)

	workspaces := map[int]*workspace{}
	prepare := func(n int) (*workspace, error) {
		if ws, ok := workspaces[n]; ok {
			return ws, nil
		}
		log.Info("generating sites", "pages", n)
		ws, err := newWorkspace(cfg.work, cfg.content, cfg.seed, n)
		if err != nil {
			return nil, err
		}
		if err := ws.initChain(ctx, cfg.proofsite); err != nil {
			return nil, err
		}
		workspaces[n] = ws
		return ws, nil
	}

	if cfg.only != phaseIncremental {
		for _, n := range cfg.pages {
			ws, err := prepare(n)
			if err != nil {
				return err
			}
			res, err := fullBuilds(ctx, cfg, ws, log)
			if err != nil {
				return fmt.Errorf("full build, %d pages: %w", n, err)
			}
			rep.full = append(rep.full, res)
		}
	}
	if cfg.only != phaseFull {
		ws, err := prepare(cfg.livePages)
		if err != nil {
			return err
		}
		rep.livePages = cfg.livePages
		for _, tool := range liveTools(cfg, ws) {
			res := measureLive(ctx, cfg, ws, tool, log)
			if res.Err != nil {
				log.Error("incremental phase", "tool", tool.name, "err", res.Err)
			}
			rep.live = append(rep.live, res)
		}
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	rep.facts.LoadAfter = loadAverage()
	return rep.write(stdout)
}
