package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"runtime"
	"strings"
	"time"
)

// Exit codes.
const (
	exitOK      = 0  // every target passed
	exitFailure = 1  // a target failed its threshold, or the run broke
	exitUsage   = 64 // the command line was wrong (EX_USAGE)
)

// config is one benchmark run as the command line asked for it.
type config struct {
	bin         string        // proofsite binary under test
	content     string        // content folder for ledger init and build
	work        string        // folder for everything the run generates
	wrk         string        // wrk executable
	nginx       string        // nginx executable
	rounds      int           // interleaved rounds over all targets
	duration    time.Duration // length of one wrk run
	warmup      time.Duration // length of the warm-up run per target
	connections int           // wrk -c
	threads     int           // wrk -t
	gomaxprocs  int           // GOMAXPROCS of both Go servers
	only        []string      // the targets to load (and their baselines); empty: all
}

// run executes one command line and returns the process exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == bareFiberCmd {
		return runBareFiber(ctx, args[1:], stdout, stderr)
	}
	if len(args) > 0 && args[0] == chatEdgeCmd {
		return runChatEdge(ctx, args[1:], stdout, stderr)
	}
	cfg, err := parseConfig(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	if err != nil {
		fmt.Fprintf(stderr, "httpbench: %v (run \"httpbench -h\")\n", err)
		return exitUsage
	}
	pass, err := bench(ctx, cfg, stdout, stderr)
	if err != nil && ctx.Err() != nil {
		fmt.Fprintln(stderr, "httpbench: interrupted; every process it started was stopped")
		return exitFailure
	}
	if err != nil {
		fmt.Fprintf(stderr, "httpbench: %v\n", err)
		return exitFailure
	}
	if !pass {
		fmt.Fprintln(stderr, "httpbench: a target missed its threshold")
		return exitFailure
	}
	return exitOK
}

// parseConfig reads the benchmark's flags.
func parseConfig(args []string, stderr io.Writer) (config, error) {
	fs := flag.NewFlagSet("httpbench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var c config
	fs.StringVar(&c.bin, "bin", "bin/proofsite", "proofsite `binary` under test")
	fs.StringVar(&c.content, "content", "content", "content `folder` to initialise the ledger and build the site from")
	fs.StringVar(&c.work, "work", "bench/out/http", "`folder` for the data dir, site, configs, logs and results.md (emptied first)")
	fs.StringVar(&c.wrk, "wrk", "wrk", "wrk `executable`")
	fs.StringVar(&c.nginx, "nginx", "nginx", "nginx `executable` (falls back to /usr/sbin/nginx)")
	fs.IntVar(&c.rounds, "rounds", 3, "interleaved `rounds` over all targets; the table reports medians")
	fs.DurationVar(&c.duration, "duration", 10*time.Second, "`length` of one wrk run (wrk -d)")
	fs.DurationVar(&c.warmup, "warmup", 2*time.Second, "`length` of the warm-up run per target, not counted")
	fs.IntVar(&c.connections, "connections", 64, "open `connections` (wrk -c)")
	fs.IntVar(&c.threads, "threads", 2, "wrk `threads` (wrk -t)")
	fs.IntVar(&c.gomaxprocs, "gomaxprocs", runtime.GOMAXPROCS(0)+1, "GOMAXPROCS of proofsite and of the bare fiber handler (the same for both; by default proofsite serve's own: one more than the cores)")
	fs.Func("only", "load only these comma-separated `targets` and their baselines, e.g. evaluate (a wrong name lists them)", func(v string) error {
		c.only = strings.Split(v, ",")
		return nil
	})
	if err := fs.Parse(args); err != nil {
		return config{}, err
	}
	switch {
	case fs.NArg() > 0:
		return config{}, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	case c.rounds < 1:
		return config{}, errors.New("--rounds must be at least 1")
	case c.duration < time.Second:
		return config{}, errors.New("--duration must be at least 1s (wrk's resolution)")
	case c.warmup != 0 && c.warmup < time.Second:
		return config{}, errors.New("--warmup must be 0 or at least 1s")
	case c.threads < 1 || c.connections < c.threads:
		return config{}, errors.New("--connections must be at least --threads, and --threads at least 1")
	case c.gomaxprocs < 1:
		return config{}, errors.New("--gomaxprocs must be at least 1")
	}
	if _, err := selectTargets(newTargets(servers{}), c.only); err != nil {
		return config{}, err
	}
	return c, nil
}
