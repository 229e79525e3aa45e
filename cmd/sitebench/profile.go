package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime/pprof"
	"slices"

	"github.com/proofsite/proofsite/site"
)

// profileBuild generates the largest -pages site, builds it once in-process
// to warm the file cache, then builds it again under the CPU profiler and
// writes the profile to cfg.profile. The build is site.New(...).Build, the
// call "proofsite build" makes, with default render options.
func profileBuild(ctx context.Context, cfg config, stdout io.Writer, log *slog.Logger) error {
	if err := os.MkdirAll(cfg.work, 0o755); err != nil {
		return fmt.Errorf("work folder: %w", err)
	}
	if !cfg.keep {
		defer os.RemoveAll(cfg.work)
	}
	n := slices.Max(cfg.pages)
	log.Info("generating site", "pages", n)
	ws, err := newWorkspace(cfg.work, cfg.content, cfg.seed, n)
	if err != nil {
		return err
	}
	if _, err := buildInProcess(ctx, ws); err != nil {
		return fmt.Errorf("warm-up build: %w", err)
	}

	f, err := os.Create(cfg.profile)
	if err != nil {
		return fmt.Errorf("profile: %w", err)
	}
	defer f.Close()
	if err := pprof.StartCPUProfile(f); err != nil {
		return fmt.Errorf("profile: %w", err)
	}
	res, err := buildInProcess(ctx, ws)
	pprof.StopCPUProfile()
	if err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("profile: %w", err)
	}
	fmt.Fprintf(stdout, "%s\nCPU profile of a %d-page build written to %s; look at it with\n\tgo tool pprof -top -cum %s\n\tgo tool pprof -http 127.0.0.1:8081 %s\n",
		res, n, cfg.profile, cfg.profile, cfg.profile)
	return nil
}

// buildInProcess makes one full build of ws's proofsite content into a fresh
// output folder.
func buildInProcess(ctx context.Context, ws *workspace) (site.Result, error) {
	if err := os.RemoveAll(ws.psOut); err != nil {
		return site.Result{}, err
	}
	b, err := site.New(site.Options{ContentDir: ws.psContent, OutDir: ws.psOut})
	if err != nil {
		return site.Result{}, err
	}
	return b.Build(ctx, nil)
}
