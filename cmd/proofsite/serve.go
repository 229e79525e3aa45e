package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/proofsite/proofsite/ledger/chain"
	"github.com/proofsite/proofsite/ledger/witness"
	"github.com/proofsite/proofsite/live"
	"github.com/proofsite/proofsite/live/memory/dual"
	"github.com/proofsite/proofsite/live/towns"
	"github.com/proofsite/proofsite/site/content"
)

func runServe(ctx context.Context, env *environment, args []string) error {
	fs := newFlagSet(env, "serve", "[--addr HOST:PORT] [--api-addr HOST:PORT] [--data DIR] [--witness-keys DIR] [--public DIR] [--content DIR]")
	cf := registerConfig(fs, "serve")
	var logWitnesses []witness.Client
	fs.Func("log-witness", "submit every checkpoint to the C2SP tlog-witness `URL=KEY` (its submission prefix and cosignature/v1 verifier key, as \"proofsite witness\" prints it) and publish its cosignature (repeatable)", func(s string) error {
		url, key, ok := strings.Cut(s, "=")
		if !ok || !strings.HasPrefix(url, "http") || key == "" {
			return errors.New("want URL=KEY")
		}
		logWitnesses = append(logWitnesses, witness.Client{URL: url, VerifierKey: key})
		return nil
	})
	if err := parseFlags(fs, args, 0); err != nil {
		return err
	}
	cfg, err := cf.resolve(env)
	if err != nil {
		return err
	}
	tuneServeGC(env)
	cores := tuneServeProcs(env)
	// Hidden: profile the server until it stops, for "make bench-http".
	if file := env.getenv("PROOFSITE_CPUPROFILE"); file != "" {
		stop, err := startCPUProfile(file)
		if err != nil {
			return err
		}
		defer stop()
	}

	site, err := content.Load(os.DirFS(cfg.Content))
	if err != nil {
		return contentError(env, cfg.Content, cfg.Out, err)
	}
	opts, err := cfg.chainOptions(env, site.Charter, false)
	if err != nil {
		return err
	}
	opts.LogWitnesses = logWitnesses
	c, err := chain.Bootstrap(ctx, opts, cfg.historyFile())
	if err != nil {
		return err
	}
	defer c.Close()
	if _, err := c.Walk(ctx); err != nil {
		return err
	}
	nodes, err := liveAI(env, site, c)
	if err != nil {
		return err
	}
	tokens, err := cfg.memoryTokens()
	if err != nil {
		return err
	}
	access := newChainAccess(c)
	mem, err := dual.Open(ctx, filepath.Join(cfg.Data, memoryDir), dual.Options{
		Chain: access, PostgresDSN: cfg.MemoryDSN, Nodes: memoryNodes(site.Charter), Logger: env.logger,
	})
	if err != nil {
		return err
	}
	defer mem.Close()
	tw, err := towns.Open(ctx, filepath.Join(cfg.Data, townsDir), towns.Options{Charter: site.Charter, Chain: access, Memory: mem,
		Responder: live.TownResponder(nodes.Nodes), Logger: env.logger})
	if err != nil {
		return err
	}
	defer tw.Close()
	if tokens.Len() == 0 {
		env.logger.Warn("no memory token configured: POST /api/memory/store refuses every request (set PROOFSITE_MEMORY_TOKEN or --memory-token-file)")
	}
	background, stopBackground := context.WithCancel(context.WithoutCancel(ctx))
	var wg sync.WaitGroup
	wg.Go(func() { mem.Run(background) })
	// After the server has drained: stop the replicator, then (deferred)
	// close the memory and the chain.
	defer wg.Wait()
	defer stopBackground()

	evaluation, records, err := openEvaluation(env, cfg, site, c, nodes.Nodes.Judge())
	if err != nil {
		return err
	}
	defer records.Close()
	if evaluation.Concurrency == 0 {
		evaluation.Concurrency = cores
	}
	srv, err := live.New(live.Options{
		PublicDir: cfg.Out, TilesDir: c.TilesDir(), Site: liveSite(site), Chain: c.Store(), Appender: c, Publisher: c, Eval: evaluation, AI: nodes,
		Memory: mem, MemoryTokens: live.MemoryTokens{Tokens: tokens}, Towns: tw,
		TrustedProxies: cfg.TrustedProxies,
		PostLimit:      cfg.liveLimit(), Pulse: c.WalkIfDue, Version: currentVersion(), Logger: env.logger,
	})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return err
	}
	errc := make(chan error, 2)
	go func() { errc <- srv.Serve(ln) }()
	fmt.Fprintf(env.stdout, "proofsite: serving %s and the live edge on http://%s\n", cfg.Out, ln.Addr())
	if cfg.APIAddr != "" {
		apiLn, err := net.Listen("tcp", cfg.APIAddr)
		if err != nil {
			srv.Shutdown(context.Background())
			return err
		}
		go func() { errc <- srv.ServeAPI(apiLn) }()
		fmt.Fprintf(env.stdout, "proofsite: serving the API origin on http://%s\n", apiLn.Addr())
	}

	select {
	case <-ctx.Done():
	case err := <-errc:
		srv.Shutdown(context.Background())
		return err
	}
	// SIGTERM or Ctrl-C: drain requests in flight, then close the store.
	env.logger.Info("shutting down: draining requests")
	drain, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return srv.Shutdown(drain)
}

// tuneServeGC sets the collector of a serving process: GOGC=200 with a
// soft limit of 1 GiB. A server keeps about 75 MB alive (the evaluator's
// data, the chain, the site) and an evaluation allocates about 10 KB, so
// at GOGC=100 a collection, tens of milliseconds of CPU that take half a
// core on two, came every 6,000 or so evaluations: about 10-30 CPU-µs of
// an evaluation's 450-600 (gctrace under wrk at 64 connections, rough,
// 2026-11-23, machine shared). GOGC=200 halves that for about 75 MB more
// heap; the soft limit makes the collector run more often instead of
// growing past 1 GiB. GOGC and GOMEMLIMIT in the environment win.
func tuneServeGC(env *environment) {
	if env.getenv("GOGC") == "" {
		debug.SetGCPercent(200)
	}
	if env.getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(1 << 30)
	}
}

// tuneServeProcs gives a serving process one more P (GOMAXPROCS) than it
// has cores, and returns the cores: the evaluations take turns on that
// many (live.Evaluation.Concurrency), and the extra P keeps reading
// requests, writing answers and serving the other routes while every core
// evaluates, instead of queueing them behind the evaluations. On this
// project's 2-core VM, POST /api/v1/evaluate at 64 connections had a p99
// of 39 ms with 2 Ps and 19-20 ms with 3, at the same throughput (wrk,
// 2026-11-24, README). GOMAXPROCS in the environment wins; the cores are
// then the fewer of it and the CPUs the process may run on.
func tuneServeProcs(env *environment) (cores int) {
	cores = runtime.GOMAXPROCS(0) // the runtime's default: CPUs, affinity, cgroup quota
	if env.getenv("GOMAXPROCS") != "" {
		return min(cores, runtime.NumCPU())
	}
	runtime.GOMAXPROCS(cores + 1)
	return cores
}
