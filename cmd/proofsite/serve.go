package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/proofsite/proofsite/ledger/store"
	"github.com/proofsite/proofsite/live"
	"github.com/proofsite/proofsite/site/content"
)

func runServe(ctx context.Context, env *environment, args []string) error {
	fs := newFlagSet(env, "serve", "[--addr HOST:PORT] [--api-addr HOST:PORT] [--data DIR] [--public DIR] [--content DIR]")
	addr := fs.String("addr", envOr(env, "PROOFSITE_ADDR", "127.0.0.1:8080"), "listen `address` of the site and its live routes (env PROOFSITE_ADDR)")
	apiAddr := fs.String("api-addr", envOr(env, "PROOFSITE_API_ADDR", ""), "optional second listen `address` for the API origin: /api/v1/*, /api/chain/latest (env PROOFSITE_API_ADDR)")
	public := fs.String("public", envOr(env, "PROOFSITE_OUT", "public"), "built site `folder` to serve (env PROOFSITE_OUT)")
	proxies := fs.String("trusted-proxies", envOr(env, "PROOFSITE_TRUSTED_PROXIES", ""), "comma-separated `addresses` or CIDR prefixes of reverse proxies whose X-Forwarded-For is believed (env PROOFSITE_TRUSTED_PROXIES)")
	walkEvery := fs.Duration("walk-every", 10*time.Minute, "how often to re-verify the whole chain")
	postLimit := fs.String("post-limit", envOr(env, "PROOFSITE_POST_LIMIT", live.DefaultPostLimit.String()), "per-IP `rate` of POST routes without a limit of their own, as N/DURATION (env PROOFSITE_POST_LIMIT)")
	var lf ledgerFlags
	lf.register(fs, env)
	if err := parseFlags(fs, args, 0); err != nil {
		return err
	}
	// Hidden: profile the server until it stops, for "make bench-http".
	if file := env.getenv("PROOFSITE_CPUPROFILE"); file != "" {
		stop, err := startCPUProfile(file)
		if err != nil {
			return err
		}
		defer stop()
	}

	limit, err := live.ParseLimit(*postLimit)
	if err != nil {
		return usagef("--post-limit: %v", err)
	}
	site, err := content.Load(os.DirFS(lf.content))
	if err != nil {
		return contentError(env, lf.content, *public, err)
	}
	if err := ensureLedger(ctx, env, lf); err != nil {
		return err
	}
	chain, err := lf.openStore(env, "", [32]byte{})
	if err != nil {
		return err
	}
	defer chain.Close()
	walker := &fullWalker{chain: chain, env: env, every: *walkEvery}
	if err := walker.walk(ctx); err != nil {
		return err
	}

	ls := liveSite(site.Config, site)
	srv, err := live.New(live.Options{
		PublicDir: *public, Site: &ls, Chain: chain, TrustedProxies: splitList(*proxies),
		PostLimit: limit, Pulse: walker.maybeWalk, Version: currentVersion(), Logger: env.logger,
	})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	errc := make(chan error, 2)
	go func() { errc <- srv.Serve(ln) }()
	fmt.Fprintf(env.stdout, "proofsite: serving %s and the live edge on http://%s\n", *public, ln.Addr())
	if *apiAddr != "" {
		apiLn, err := net.Listen("tcp", *apiAddr)
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

// ensureLedger initialises the chain on first start, so a fresh checkout
// serves with no setup.
func ensureLedger(ctx context.Context, env *environment, lf ledgerFlags) error {
	if _, err := os.Stat(lf.storeDir()); !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	env.logger.Info("no ledger yet: initialising it from the history", "data", lf.data)
	return runLedgerInit(ctx, env, []string{"--data", lf.data, "--content", lf.content})
}

// fullWalker re-verifies the whole chain at start-up and on a schedule.
type fullWalker struct {
	chain *store.Store
	env   *environment
	every time.Duration

	mu   sync.Mutex
	last time.Time
}

func (w *fullWalker) walk(ctx context.Context) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	start := time.Now()
	var mu sync.Mutex
	next := start.Add(time.Second)
	progress := func(checked int64) { // long walks report once a second
		mu.Lock()
		defer mu.Unlock()
		if now := time.Now(); now.After(next) {
			next = now.Add(time.Second)
			w.env.logger.Info("full walk", "rows_checked", checked, "of", w.chain.Count())
		}
	}
	res, err := w.chain.FullWalk(ctx, nil, progress)
	if err != nil {
		return fmt.Errorf("full walk: %w", err)
	}
	w.last = start
	level := w.env.logger.Info
	if !res.Verdict.Pass() {
		level = w.env.logger.Error
	}
	level("full walk", "verdict", res.Verdict.Verdict, "canonical_spine_valid", res.Verdict.CanonicalSpineValid,
		"rows", res.Verdict.RowsChecked, "took", time.Since(start).Round(time.Millisecond))
	return nil
}

// maybeWalk runs a full walk when one is due; the live edge calls it on
// every heartbeat.
func (w *fullWalker) maybeWalk(ctx context.Context) {
	w.mu.Lock()
	due := time.Since(w.last) >= w.every
	w.mu.Unlock()
	if due {
		if err := w.walk(ctx); err != nil && ctx.Err() == nil {
			w.env.logger.Error("scheduled full walk", "err", err)
		}
	}
}

func splitList(s string) []string {
	var out []string
	for part := range strings.SplitSeq(s, ",") {
		if part = strings.TrimSpace(part); part != "" {
			out = append(out, part)
		}
	}
	return out
}
